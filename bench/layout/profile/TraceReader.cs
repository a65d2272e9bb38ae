using System.Text;
using Microsoft.Diagnostics.Tracing;

namespace Peregrine.Profile;

/// <summary>A method as the runtime knows it: its IL module's path and its MethodDef token.</summary>
internal readonly record struct MethodKey(string ModulePath, int Token);

/// <summary>A type definition: its IL module's path and its TypeDef token.</summary>
internal sealed record TypeKey(string ModulePath, int Token);

/// <summary>One method's instrumentation data from the traces.</summary>
internal sealed class MethodProfile(MethodKey key, string? display, List<SchemaEntry> schema)
{
    public MethodKey Key { get; } = key;

    /// <summary>The method's name for warnings: the trace's, then the metadata's once resolved.</summary>
    public string? Display { get; set; } = display;

    public List<SchemaEntry> Schema { get; set; } = schema;
}

/// <summary>
/// Reads the instrumentation data of one EventPipe trace. The runtime writes every method's data
/// at shutdown (PgoManager::Shutdown) as JitInstrumentationData(Verbose) events, split into
/// chunks, when the JitInstrumentationData keyword is on; ModuleLoad events map the module ids
/// of those events to files, and BulkType events name the types that class-profile histograms
/// hold as raw type handles.
/// </summary>
internal static class TraceReader
{
    // MethodFlags of an instrumentation event: the chunk's index, and a bit on the last chunk.
    const int ChunkIndexMask = 0x7fffffff;
    const int LastChunk = unchecked((int)0x80000000);

    // High byte of a token: the metadata table.
    const int TypeDefTable = 0x02;

    /// <summary>The chunks of one method's data, in order; a gap or a chunk after the last spoils it.</summary>
    sealed class Chunks(long moduleId, int token, string? name)
    {
        public List<byte[]> Parts { get; } = [];
        public int Last { get; set; } = -1;
        public bool Done { get; set; }
        public bool Bad { get; set; }
        public long ModuleId { get; } = moduleId;
        public int Token { get; } = token;
        public string? Name { get; } = name;
    }

    /// <summary>The methods of the trace with complete, readable data, by method.</summary>
    /// <exception cref="ProfileException">the file cannot be read as a trace</exception>
    public static Dictionary<MethodKey, MethodProfile> Read(string path, CreateStats stats)
    {
        var modules = new Dictionary<long, string>();
        var types = new Dictionary<long, (long ModuleId, int Token)>();
        var chunks = new Dictionary<long, Chunks>();
        int events = 0;

        void Add(long methodId, int flags, byte[] data, long moduleId, int token, string? name)
        {
            if (!chunks.TryGetValue(methodId, out var c))
            {
                chunks[methodId] = c = new Chunks(moduleId, token, name);
            }

            if (c.Bad)
            {
                return;
            }

            int index = flags & ChunkIndexMask;
            if (index != c.Last + 1 || c.Done)
            {
                c.Bad = true;
                return;
            }

            c.Last = index;
            c.Parts.Add(data);
            if ((flags & LastChunk) != 0)
            {
                c.Done = true;
            }
        }

        try
        {
            using var source = new EventPipeEventSource(path);
            var clr = source.Clr;
            clr.LoaderModuleLoad += e => modules[e.ModuleID] = e.ModuleILPath;
            clr.LoaderModuleDCStopV2 += e => modules.TryAdd(e.ModuleID, e.ModuleILPath);
            clr.TypeBulkType += e =>
            {
                for (int i = 0; i < e.Count; i++)
                {
                    var v = e.Values(i);
                    // TypeNameID is the TypeDef token. Only plain types: a generic instantiation or
                    // an array has no TypeDef of its own to name in the .mibc.
                    if ((v.TypeNameID >> 24) == TypeDefTable && v.TypeParameterCount == 0 && v.ModuleID != 0)
                    {
                        types[(long)v.TypeID] = ((long)v.ModuleID, v.TypeNameID);
                    }
                }
            };

            // TraceEvent 3.1.x reads this event's MethodToken, strings and Data two bytes early (it
            // read token 0x06000044 as 0x440000), so the payload is read here, as the runtime's
            // manifest lays it out: ClrInstanceID u16, MethodFlags u32, DataSize u32, MethodID u64,
            // ModuleID u64, MethodToken u32, MethodNamespace, MethodName, MethodSignature (UTF-16,
            // NUL-terminated), Data[DataSize].
            clr.JitInstrumentationDataVerboseInstrumentationData += e =>
            {
                stats.Events++;
                events++;
                byte[] raw = e.EventData();
                if (raw.Length < 30)
                {
                    stats.BadData++;
                    return;
                }

                int flags = BitConverter.ToInt32(raw, 2), size = BitConverter.ToInt32(raw, 6);
                long methodId = BitConverter.ToInt64(raw, 10), moduleId = BitConverter.ToInt64(raw, 18);
                int token = BitConverter.ToInt32(raw, 26);
                int o = 30;
                string String()
                {
                    int start = o;
                    while (o + 1 < raw.Length && (raw[o] != 0 || raw[o + 1] != 0)) o += 2;
                    var s = Encoding.Unicode.GetString(raw, start, o - start);
                    o += 2;
                    return s;
                }

                string ns = String(), name = String(), signature = String();
                if (o + size != raw.Length)
                {
                    stats.BadData++;
                    return;
                }

                Add(methodId, flags, raw.AsSpan(o, size).ToArray(), moduleId, token, ns + "::" + name + " " + signature);
            };

            // The terse event names no module or token: counted, then dropped as "no module/token".
            clr.JitInstrumentationDataInstrumentationData += e =>
            {
                stats.Events++;
                events++;
                Add(e.MethodID, e.MethodFlags, e.Data, 0, 0, null);
            };

            source.Process();
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or FormatException
                                      or InvalidOperationException or System.Runtime.Serialization.SerializationException)
        {
            // TraceEvent reports a file that is not a nettrace (or is cut short) with one of these.
            throw new ProfileException($"cannot read trace {path}: {e.Message}");
        }

        if (events == 0)
        {
            throw new ProfileException(
                $"{path} has no JitInstrumentationData events: was the JitInstrumentationData keyword " +
                "(0x10000000000) on, and did the process exit normally (the runtime writes them at shutdown)?");
        }

        var typeKeys = new Dictionary<long, TypeKey>();
        foreach (var (id, (moduleId, token)) in types)
        {
            if (modules.TryGetValue(moduleId, out var modulePath) && !string.IsNullOrEmpty(modulePath))
            {
                typeKeys[id] = new TypeKey(modulePath, token);
            }
        }

        var result = new Dictionary<MethodKey, MethodProfile>();
        foreach (var c in chunks.Values)
        {
            stats.MethodsInTrace++;
            if (c.Bad || !c.Done)
            {
                stats.Incomplete++;
                continue;
            }

            if (c.Token == 0 || !modules.TryGetValue(c.ModuleId, out var modulePath) || string.IsNullOrEmpty(modulePath))
            {
                stats.NoModule++;
                continue;
            }

            List<SchemaEntry> schema;
            try
            {
                schema = PgoSchema.Parse(PgoSchema.Decompress([.. c.Parts.SelectMany(p => p)]), compressed: true);
            }
            catch (InvalidDataException e)
            {
                // One method's data is lost; the others are still good.
                stats.BadData++;
                if (stats.BadData < 5) Console.Error.WriteLine($"warning: {c.Name}: {e.Message}");
                continue;
            }

            foreach (var s in schema)
            {
                if (s.Marshal == PgoSchema.TypeHandle)
                {
                    s.Types = new TypeKey?[s.Count];
                    for (int i = 0; i < s.Count; i++)
                    {
                        if (typeKeys.TryGetValue(s.Data[i], out var type))
                        {
                            s.Types[i] = type;
                            stats.TypesResolved++;
                        }
                        else if (s.Data[i] != 0)
                        {
                            stats.TypesUnresolved++;
                        }
                    }
                }
                else if (s.Marshal == PgoSchema.MethodHandle)
                {
                    // Method handles are not resolved: the .mibc gets 0 (no guess) for each.
                    s.Types = new TypeKey?[s.Count];
                }
            }

            var key = new MethodKey(modulePath, c.Token);
            if (result.TryGetValue(key, out var previous))
            {
                // Two method ids, one MethodDef (instantiations of a generic): keep the busier.
                if (PgoSchema.Total(schema) > PgoSchema.Total(previous.Schema)) previous.Schema = schema;
                continue;
            }

            result[key] = new MethodProfile(key, c.Name, schema);
        }

        return result;
    }
}
