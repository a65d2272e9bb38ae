using System.IO.Compression;
using System.Reflection;
using System.Reflection.Metadata;
using System.Reflection.Metadata.Ecma335;
using System.Reflection.PortableExecutable;

namespace Peregrine.Profile;

/// <summary>One assembly's methods, as the .mibc groups them: the name is the AssemblyDictionary's
/// key (<c>Name;</c>), each method a MemberRef with its schema.</summary>
internal sealed record MibcGroup(string Name, List<(EntityHandle Method, List<SchemaEntry> Schema)> Methods);

/// <summary>
/// Writes a .mibc: an IL-only assembly whose method bodies hold the profile, in the layout that ILC's
/// MIbcProfileParser (and dotnet-pgo's writer) use:
/// <code>
///   &lt;Module&gt;::AssemblyDictionary:  ldstr "Asm;"  ldtoken &lt;group method&gt;  pop        (per group)
///   &lt;group method&gt;:  ldtoken &lt;MemberRef&gt;  ldstr "InstrumentationDataStart"  ldc.* ...
///                     ldstr "InstrumentationDataEnd"  pop                              (per method)
/// </code>
/// This partial part lays out the file; MibcWriter.References.cs copies the metadata it refers to.
/// </summary>
internal sealed partial class MibcWriter
{
    // dotnet-pgo cuts group method names to this length; the name is for people, ILC ignores it.
    const int MaxGroupNameLength = 200;

    readonly MetadataBuilder _metadata = new();
    readonly BlobBuilder _il = new();
    readonly MethodBodyStreamEncoder _bodies;
    readonly string _name;
    readonly Dictionary<string, UserStringHandle> _strings = new(StringComparer.Ordinal);
    readonly List<(string Name, int BodyOffset)> _globals = [];
    readonly BlobHandle _voidSignature;

    /// <param name="name">The file name of the .mibc, which is also its module's name.</param>
    public MibcWriter(string name)
    {
        _name = name;
        _bodies = new MethodBodyStreamEncoder(_il);
        var signature = new BlobBuilder();
        new BlobEncoder(signature).MethodSignature().Parameters(0, r => r.Void(), p => { });
        _voidSignature = _metadata.GetOrAddBlob(signature);
    }

    /// <summary>
    /// Writes the groups to <paramref name="output"/>: zipped (one entry, <c>NAME.dll</c>), as
    /// dotnet-pgo writes it and ILC expects by default, or as the bare assembly.
    /// </summary>
    public void Write(List<MibcGroup> groups, string output, bool uncompressed)
    {
        var dictionary = new InstructionEncoder(new BlobBuilder());
        int n = 0;
        foreach (var group in groups)
        {
            var il = new InstructionEncoder(new BlobBuilder());
            foreach (var (method, schema) in group.Methods)
            {
                il.OpCode(ILOpCode.Ldtoken);
                il.Token(method);
                il.LoadString(UserString("InstrumentationDataStart"));
                foreach (var s in schema)
                {
                    // Every field of every entry, as absolute values: the reader is told the longs
                    // are not compressed, and 0xF says all four fields follow.
                    Long(il, 0xF);
                    Long(il, s.ILOffset);
                    Long(il, s.Kind);
                    Long(il, s.Count);
                    Long(il, s.Other);
                    if (s.Marshal == 0)
                    {
                        continue;
                    }

                    for (int i = 0; i < s.Count; i++)
                    {
                        if (s.IsHandle)
                        {
                            // A handle is a token (ldtoken), or 0 for "unknown"; 0 needs no token.
                            if (s.Data[i] != 0 && (s.Data[i] >> 24) != 0)
                            {
                                il.OpCode(ILOpCode.Ldtoken);
                                il.Token((int)s.Data[i]);
                            }
                            else
                            {
                                Long(il, 0);
                            }
                        }
                        else
                        {
                            Long(il, s.Data[i]);
                        }
                    }
                }

                il.LoadString(UserString("InstrumentationDataEnd"));
                il.OpCode(ILOpCode.Pop);
            }

            string basic = "Assemblies_" + group.Name;
            if (basic.Length > MaxGroupNameLength) basic = basic[..MaxGroupNameLength];
            int row = AddGlobal(basic + "_" + (++n), il);
            dictionary.LoadString(UserString(group.Name));
            dictionary.OpCode(ILOpCode.Ldtoken);
            dictionary.Token(MetadataTokens.MethodDefinitionHandle(row));
            dictionary.OpCode(ILOpCode.Pop);
        }

        AddGlobal("AssemblyDictionary", dictionary);

        _metadata.AddModule(0, _metadata.GetOrAddString(_name), _metadata.GetOrAddGuid(Guid.NewGuid()), default, default);
        _metadata.AddAssembly(_metadata.GetOrAddString(Path.GetFileNameWithoutExtension(_name)), new Version(1, 0, 0, 0),
            default, default, 0, AssemblyHashAlgorithm.None);
        foreach (var (name, bodyOffset) in _globals)
        {
            _metadata.AddMethodDefinition(MethodAttributes.Public | MethodAttributes.Static | MethodAttributes.HideBySig,
                MethodImplAttributes.IL, _metadata.GetOrAddString(name), _voidSignature, bodyOffset, default);
        }

        // The global methods belong to <Module>, the first TypeDef, whose method list starts at row 1.
        _metadata.AddTypeDefinition(default, default, _metadata.GetOrAddString("<Module>"), default,
            MetadataTokens.FieldDefinitionHandle(1), MetadataTokens.MethodDefinitionHandle(1));

        var pe = new ManagedPEBuilder(PEHeaderBuilder.CreateLibraryHeader(), new MetadataRootBuilder(_metadata), _il);
        var blob = new BlobBuilder();
        pe.Serialize(blob);
        byte[] bytes = blob.ToArray();
        if (File.Exists(output)) File.Delete(output);
        if (uncompressed)
        {
            File.WriteAllBytes(output, bytes);
            return;
        }

        using var zip = ZipFile.Open(output, ZipArchiveMode.Create);
        var entry = zip.CreateEntry(Path.GetFileName(output) + ".dll", CompressionLevel.Optimal);
        using var stream = entry.Open();
        stream.Write(bytes);
    }

    UserStringHandle UserString(string s) =>
        _strings.TryGetValue(s, out var h) ? h : _strings[s] = _metadata.GetOrAddUserString(s);

    /// <summary>Adds a global method with the given body; returns its MethodDef row.</summary>
    int AddGlobal(string name, InstructionEncoder il)
    {
        il.OpCode(ILOpCode.Ret);
        int offset = _bodies.AddMethodBody(il, maxStack: 8, localVariablesSignature: default, attributes: MethodBodyAttributes.None);
        _globals.Add((name, offset));
        return _globals.Count;
    }

    static void Long(InstructionEncoder il, long v)
    {
        if (v is >= int.MinValue and <= int.MaxValue) il.LoadConstantI4((int)v);
        else il.LoadConstantI8(v);
    }
}
