using System.Collections.Immutable;
using System.Reflection.Metadata;
using System.Reflection.Metadata.Ecma335;
using System.Reflection.PortableExecutable;

namespace Peregrine.Profile;

/// <summary>The command line of <c>create-mibc</c>.</summary>
internal sealed record CreateOptions(
    IReadOnlyList<string> Traces,
    IReadOnlyList<string> References,
    IReadOnlyList<string> Assemblies,
    string Output,
    bool Uncompressed);

/// <summary>What create-mibc kept and dropped, printed at the end so a thin profile can be explained.</summary>
internal sealed class CreateStats
{
    public int Events { get; set; }
    public int MethodsInTrace { get; set; }
    public int Incomplete { get; set; }
    public int NoModule { get; set; }
    public int BadData { get; set; }
    public int Generic { get; set; }
    public int NotAssembly { get; set; }
    public int Filtered { get; set; }
    public int Written { get; set; }
    public int TypesResolved { get; set; }
    public int TypesUnresolved { get; set; }
    public int TypesWritten { get; set; }
}

/// <summary>
/// create-mibc: merges the traces' profiles, maps each method to a MemberRef of the .mibc and each
/// named type to a TypeRef, and writes them grouped by assembly.
/// </summary>
internal static class CreateMibc
{
    const int MethodDefTable = 0x06;

    public static int Run(CreateOptions options)
    {
        var stats = new CreateStats();
        var merged = new Dictionary<MethodKey, MethodProfile>();
        foreach (var trace in options.Traces)
        {
            var one = TraceReader.Read(trace, stats);
            Console.WriteLine($"{trace}: {one.Count} methods with instrumentation data");
            foreach (var (key, method) in one)
            {
                if (merged.TryGetValue(key, out var previous))
                {
                    Merge(previous, method);
                }
                else
                {
                    merged[key] = method;
                }
            }
        }

        using var modules = new ModuleFiles(options.References);
        var writer = new MibcWriter(Path.GetFileName(options.Output));
        var groups = new SortedDictionary<string, List<(MethodProfile Method, EntityHandle Handle)>>(StringComparer.Ordinal);
        foreach (var m in merged.Values.OrderBy(m => m.Key.ModulePath, StringComparer.Ordinal).ThenBy(m => m.Key.Token))
        {
            if (modules.Open(m.Key.ModulePath) is not { IsAssembly: true } md)
            {
                stats.NotAssembly++;
                continue;
            }

            string assembly = md.GetString(md.GetAssemblyDefinition().Name);
            if (options.Assemblies.Count > 0 && !options.Assemblies.Any(pattern => Matches(assembly, pattern)))
            {
                stats.Filtered++;
                continue;
            }

            if ((m.Key.Token >> 24) != MethodDefTable)
            {
                stats.NoModule++;
                continue;
            }

            // A generic method's data belongs to one instantiation, and the event does not say
            // which: without it the MemberRef would name the open method, which ILC never compiles.
            var handle = MetadataTokens.MethodDefinitionHandle(m.Key.Token & 0xFFFFFF);
            var definition = md.GetMethodDefinition(handle);
            if (definition.GetGenericParameters().Count > 0 || IsInGenericType(md, definition.GetDeclaringType()))
            {
                stats.Generic++;
                continue;
            }

            EntityHandle reference;
            try
            {
                reference = writer.MethodRef(md, handle);
                m.Display = MibcWriter.Describe(md, handle);
            }
            catch (Exception e) when (e is NotSupportedException or BadImageFormatException)
            {
                // A signature this writer cannot copy: that method is left out, the rest are written.
                stats.BadData++;
                Console.Error.WriteLine($"warning: {m.Display} ({m.Key.ModulePath} 0x{m.Key.Token:x8}): {e.GetType().Name}: {e.Message}");
                continue;
            }

            ResolveTypes(m, writer, modules, stats);
            if (!groups.TryGetValue(assembly + ";", out var list))
            {
                groups[assembly + ";"] = list = [];
            }

            list.Add((m, reference));
            stats.Written++;
        }

        writer.Write([.. groups.Select(g => new MibcGroup(g.Key, [.. g.Value.Select(x => (x.Handle, x.Method.Schema))]))], options.Output, options.Uncompressed);

        Console.WriteLine($"events {stats.Events}; methods in traces {stats.MethodsInTrace} (incomplete {stats.Incomplete}, no module/token {stats.NoModule}, bad data {stats.BadData}); merged {merged.Count}");
        Console.WriteLine($"skipped: generic {stats.Generic}, module not an assembly/not found {stats.NotAssembly}, filtered out {stats.Filtered}");
        Console.WriteLine($"type handles: resolved {stats.TypesResolved}, unresolved {stats.TypesUnresolved}, written as TypeRefs {stats.TypesWritten}");
        Console.WriteLine($"wrote {stats.Written} methods in {groups.Count} groups to {options.Output} ({new FileInfo(options.Output).Length} bytes)");
        foreach (var g in groups)
        {
            Console.WriteLine($"  {g.Key} {g.Value.Count}");
        }

        return 0;
    }

    /// <summary>
    /// Adds a second trace's data to a method's. Counts add up when both runs compiled the same
    /// code; when they did not (a different schema), the busier run's data is kept whole, as the
    /// two cannot be lined up.
    /// </summary>
    static void Merge(MethodProfile into, MethodProfile from)
    {
        if (!PgoSchema.SameShape(into.Schema, from.Schema))
        {
            if (PgoSchema.Total(from.Schema) > PgoSchema.Total(into.Schema)) into.Schema = from.Schema;
            return;
        }

        for (int i = 0; i < from.Schema.Count; i++)
        {
            var a = into.Schema[i];
            var b = from.Schema[i];
            if (a.IsCount)
            {
                for (int j = 0; j < a.Count; j++) a.Data[j] += b.Data[j];
            }
            else if (a.Types is not null && b.Types is not null)
            {
                for (int j = 0; j < a.Count; j++) a.Types[j] ??= b.Types[j];
            }
        }
    }

    /// <summary>
    /// Replaces the raw handles of the method's handle entries with TypeRef tokens of the .mibc,
    /// or 0 where the type is unknown: a raw handle means nothing outside the traced process.
    /// </summary>
    static void ResolveTypes(MethodProfile m, MibcWriter writer, ModuleFiles modules, CreateStats stats)
    {
        foreach (var s in m.Schema)
        {
            if (s.Types is null)
            {
                continue;
            }

            for (int i = 0; i < s.Count; i++)
            {
                s.Data[i] = 0;
                if (s.Types[i] is { } type && modules.Open(type.ModulePath) is { IsAssembly: true } md)
                {
                    try
                    {
                        s.Data[i] = MetadataTokens.GetToken(writer.TypeRef(md, MetadataTokens.TypeDefinitionHandle(type.Token & 0xFFFFFF)));
                        stats.TypesWritten++;
                    }
                    catch (Exception e) when (e is NotSupportedException or BadImageFormatException)
                    {
                        // That slot of the histogram stays 0: ILC reads it as "no class guess".
                    }
                }
            }
        }
    }

    /// <summary>An --assembly pattern: a name (any case), or a prefix ending in '*'.</summary>
    static bool Matches(string assembly, string pattern) =>
        assembly.Equals(pattern, StringComparison.OrdinalIgnoreCase) ||
        (pattern.EndsWith('*') && assembly.StartsWith(pattern.TrimEnd('*'), StringComparison.OrdinalIgnoreCase));

    static bool IsInGenericType(MetadataReader md, TypeDefinitionHandle type)
    {
        while (!type.IsNil)
        {
            var definition = md.GetTypeDefinition(type);
            if (definition.GetGenericParameters().Count > 0) return true;
            type = definition.GetDeclaringType();
        }

        return false;
    }
}

/// <summary>
/// The traced process's module files, opened once each. A trace names the files the server loaded;
/// a file of the same name under a --reference folder wins, so traces taken elsewhere (or of a
/// build since deleted) can still be resolved.
/// </summary>
internal sealed class ModuleFiles(IReadOnlyList<string> references) : IDisposable
{
    readonly Dictionary<string, (PEReader? Reader, MetadataReader? Metadata)> _opened = new(StringComparer.Ordinal);

    /// <summary>The module's metadata, or null when its file is missing or holds no metadata.</summary>
    public MetadataReader? Open(string path)
    {
        if (_opened.TryGetValue(path, out var known))
        {
            return known.Metadata;
        }

        string file = path;
        foreach (var folder in references)
        {
            var candidate = Path.Combine(folder, Path.GetFileName(path));
            if (File.Exists(candidate))
            {
                file = candidate;
                break;
            }
        }

        if (!File.Exists(file))
        {
            _opened[path] = (null, null);
            return null;
        }

        var reader = new PEReader(File.ReadAllBytes(file).ToImmutableArray());
        var metadata = reader.HasMetadata ? reader.GetMetadataReader() : null;
        _opened[path] = (reader, metadata);
        return metadata;
    }

    public void Dispose()
    {
        foreach (var (reader, _) in _opened.Values)
        {
            reader?.Dispose();
        }
    }
}
