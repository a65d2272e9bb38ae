using System.Collections.Immutable;
using System.IO.Compression;
using System.Reflection.Metadata;
using System.Reflection.Metadata.Ecma335;
using System.Reflection.PortableExecutable;

namespace Peregrine.Profile;

/// <summary>
/// dump: lists a .mibc's groups, methods and schema entries, reading the file the way ILC's
/// MIbcProfileParser does, so that a profile that dumps well is one ILC can read. Ends with the
/// number of methods by the first two parts of their names (<c>Peregrine.Server</c>).
/// </summary>
internal static class MibcDump
{
    // The only opcodes a .mibc's bodies hold (ECMA-335 §III): the ldc.i4 forms are folded into one.
    const int Ldstr = 0x72, Ldtoken = 0xD0, Pop = 0x26, Ret = 0x2A;
    const int LdcI4 = 0x20, LdcI8 = 0x21, LdcR4 = 0x22, LdcR8 = 0x23;

    // Entries of a histogram beyond this many are elided.
    const int ShownValues = 8;

    /// <exception cref="ProfileException">the file cannot be read, or is not a .mibc</exception>
    public static int Run(string file, string? output)
    {
        byte[] image = ReadImage(file);
        using var pe = new PEReader(ImmutableArray.Create(image));
        MetadataReader md;
        MethodDefinitionHandle dictionary;
        try
        {
            md = pe.GetMetadataReader();
            dictionary = md.MethodDefinitions.FirstOrDefault(h => md.GetString(md.GetMethodDefinition(h).Name) == "AssemblyDictionary");
        }
        catch (BadImageFormatException e)
        {
            throw new ProfileException($"{file} is not a .mibc: {e.Message}");
        }

        if (dictionary.IsNil)
        {
            throw new ProfileException($"{file} is not a .mibc: it has no AssemblyDictionary method");
        }

        try
        {
            return Print(pe, md, dictionary, output);
        }
        catch (Exception e) when (e is InvalidDataException or BadImageFormatException)
        {
            throw new ProfileException($"{file} is not a .mibc ILC can read: {e.Message}");
        }
    }

    static int Print(PEReader pe, MetadataReader md, MethodDefinitionHandle dictionary, string? output)
    {
        var o = output is null ? Console.Out : new StreamWriter(output);
        int methods = 0, withData = 0;
        long entries = 0;
        var byPrefix = new SortedDictionary<string, int>();
        foreach (var (op, operand) in ReadIL(pe, md, dictionary))
        {
            if (op == Ldstr) o.WriteLine("Group: " + md.GetUserString(MetadataTokens.UserStringHandle((int)operand & 0xFFFFFF)));
            if (op != Ldtoken) continue;
            var groupMethod = MetadataTokens.MethodDefinitionHandle((int)operand & 0xFFFFFF);
            var longs = new List<long>();
            string current = "";
            bool inData = false;
            foreach (var (op2, v) in ReadIL(pe, md, groupMethod))
            {
                switch (op2)
                {
                    case Ldtoken:
                        if (inData)
                        {
                            longs.Add(v);
                        }
                        else
                        {
                            current = Name(md, MetadataTokens.EntityHandle((int)v));
                            methods++;
                        }

                        break;
                    case Ldstr:
                        string s = md.GetUserString(MetadataTokens.UserStringHandle((int)v & 0xFFFFFF));
                        if (s == "InstrumentationDataStart")
                        {
                            inData = true;
                            longs.Clear();
                        }
                        else if (s == "InstrumentationDataEnd")
                        {
                            inData = false;
                        }

                        break;
                    case Pop:
                        // The end of a method: the writer leaves out the schema's end marker (a
                        // header of "kind" only, kind Done), so it is added here.
                        longs.Add(2);
                        longs.Add(0);
                        var schema = longs.Count > 2 ? PgoSchema.Parse(longs, compressed: false) : [];

                        if (schema.Count > 0) withData++;
                        entries += schema.Count;
                        // Kinds 0x80.. (with the marshal bits) are histograms: not counts of a block.
                        long blocks = schema.Where(x => x.IsCount && (x.Kind & ~0x3F) != 0x80).Sum(x => x.Data.Sum());
                        int typesKnown = schema.Where(x => x.Marshal == PgoSchema.TypeHandle).Sum(x => x.Data.Count(d => (d >> 24) != 0));
                        o.WriteLine($"  Method: {current}  schema entries {schema.Count}, count total {blocks}, class-profile types named {typesKnown}");
                        foreach (var x in schema)
                        {
                            var shown = x.Data.Take(ShownValues).Select(d =>
                                x.Marshal == PgoSchema.TypeHandle && (d >> 24) != 0 ? Name(md, MetadataTokens.EntityHandle((int)d)) : d.ToString(System.Globalization.CultureInfo.InvariantCulture));
                            o.WriteLine($"    kind 0x{x.Kind:x} il {x.ILOffset} count {x.Count} other {x.Other} data [{string.Join(",", shown)}{(x.Data.Length > ShownValues ? ",..." : "")}]");
                        }

                        string prefix = string.Join('.', current.Split('.').Take(2));
                        byPrefix[prefix] = byPrefix.GetValueOrDefault(prefix) + 1;
                        longs.Clear();
                        inData = false;
                        break;
                    default:
                        if (inData) longs.Add(v);
                        break;
                }
            }
        }

        o.WriteLine($"Total: {methods} methods, {withData} with instrumentation data, {entries} schema entries");
        foreach (var (k, v) in byPrefix) o.WriteLine($"  {k}: {v}");
        o.Flush();
        if (output is not null)
        {
            o.Dispose();
            Console.WriteLine($"{methods} methods, {withData} with instrumentation data; written to {output}");
            foreach (var (k, v) in byPrefix) Console.WriteLine($"  {k}: {v}");
        }

        return 0;
    }

    /// <summary>The assembly image: the file itself, or the first entry of the zip around it.</summary>
    static byte[] ReadImage(string file)
    {
        try
        {
            byte[] bytes = File.ReadAllBytes(file);
            if (bytes is [(byte)'M', (byte)'Z', ..])
            {
                return bytes;
            }

            using var zip = new ZipArchive(new MemoryStream(bytes));
            var entry = zip.GetEntry(Path.GetFileName(file) + ".dll") ?? zip.Entries.FirstOrDefault()
                ?? throw new ProfileException($"{file} is not a .mibc: the zip is empty");
            using var stream = entry.Open();
            var image = new MemoryStream();
            stream.CopyTo(image);
            return image.ToArray();
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or InvalidDataException)
        {
            // InvalidDataException: neither an assembly nor a zip.
            throw new ProfileException($"cannot read {file} as a .mibc: {e.Message}");
        }
    }

    static string Name(MetadataReader md, EntityHandle h)
    {
        switch (h.Kind)
        {
            case HandleKind.MemberReference:
                var mr = md.GetMemberReference((MemberReferenceHandle)h);
                return Name(md, mr.Parent) + "." + md.GetString(mr.Name);
            case HandleKind.TypeReference:
                var tr = md.GetTypeReference((TypeReferenceHandle)h);
                string ns = md.GetString(tr.Namespace);
                string prefix = tr.ResolutionScope.Kind == HandleKind.TypeReference
                    ? Name(md, (EntityHandle)tr.ResolutionScope) + "+"
                    : ns.Length > 0 ? ns + "." : "";
                return prefix + md.GetString(tr.Name);
            case HandleKind.TypeSpecification:
                return "(typespec)";
            default:
                return h.Kind.ToString();
        }
    }

    /// <summary>A method body as (opcode, operand) pairs: a token, a string handle or a constant.</summary>
    static List<(int Op, long Value)> ReadIL(PEReader pe, MetadataReader md, MethodDefinitionHandle h)
    {
        var r = pe.GetMethodBody(md.GetMethodDefinition(h).RelativeVirtualAddress).GetILReader();
        var list = new List<(int, long)>();
        while (r.RemainingBytes > 0)
        {
            int op = r.ReadByte();
            switch (op)
            {
                case Ldstr or Ldtoken: list.Add((op, r.ReadInt32())); break;
                case Pop: list.Add((op, 0)); break;
                case >= 0x15 and <= 0x1E: list.Add((LdcI4, op - 0x16)); break; // ldc.i4.m1 .. ldc.i4.8
                case 0x1F: list.Add((LdcI4, r.ReadSByte())); break;             // ldc.i4.s
                case LdcI4: list.Add((LdcI4, r.ReadInt32())); break;
                case LdcI8: list.Add((LdcI8, r.ReadInt64())); break;
                case LdcR4: list.Add((LdcR4, (long)r.ReadSingle())); break;
                case LdcR8: list.Add((LdcR8, (long)r.ReadDouble())); break;
                case Ret: break;
                default: throw new InvalidDataException($"unexpected opcode 0x{op:x}");
            }
        }

        return list;
    }
}
