namespace Peregrine.Profile;

/// <summary>
/// One entry of a method's PGO schema, as the runtime's PgoInstrumentationSchema describes it:
/// what was counted (<see cref="Kind"/>), where (<see cref="ILOffset"/>), and the values.
/// </summary>
internal sealed class SchemaEntry
{
    public required int Kind { get; init; }
    public required int ILOffset { get; init; }
    public required int Count { get; init; }
    public required int Other { get; init; }

    /// <summary>Counts; for the handle kinds, the handles as the trace gives them (raw runtime pointers)
    /// and, once written, metadata tokens of the .mibc (0 for a handle that names nothing).</summary>
    public long[] Data { get; set; } = [];

    /// <summary>For the type-handle kind, the TypeDef each handle names when the trace said which;
    /// for the method-handle kind, all null. Null for the count kinds.</summary>
    public TypeKey?[]? Types { get; set; }

    public int Marshal => Kind & PgoSchema.MarshalMask;

    public bool IsCount => Marshal is PgoSchema.FourByte or PgoSchema.EightByte;

    public bool IsHandle => Marshal is PgoSchema.TypeHandle or PgoSchema.MethodHandle;
}

/// <summary>
/// The value stream of a PGO schema, as the runtime writes it (pgo_formatprocessing.h,
/// ReadInstrumentationSchemaWithLayout) and as ILC's MIbcProfileParser reads it back.
/// </summary>
internal static class PgoSchema
{
    // The low bits of InstrumentationKind say how the values are marshalled.
    public const int MarshalMask = 0xF;
    public const int FourByte = 1;
    public const int EightByte = 2;
    public const int TypeHandle = 3;
    public const int MethodHandle = 4;

    // The header of each entry starts with a bit set of the fields that follow.
    const int ILOffsetBit = 1;
    const int KindBit = 2;
    const int CountBit = 4;
    const int OtherBit = 8;
    const int NewEntry = 0x100;

    /// <summary>
    /// The runtime's signed-integer compression (SignedCompressedIntegerReader): 1 byte for 6-bit
    /// values, 2 for 13-bit, 0xC1 and 8 bytes for longs, otherwise a marker and 4 bytes. Lazy, as
    /// <see cref="Parse"/> stops at the schema's end marker and what follows is never read.
    /// </summary>
    public static IEnumerable<long> Decompress(byte[] bytes)
    {
        for (int o = 0; o < bytes.Length;)
        {
            byte b = bytes[o];
            int size = (b & 0x80) == 0 ? 1 : (b & 0xC0) == 0x80 ? 2 : b == 0xC1 ? 9 : 5;
            if (o + size > bytes.Length)
            {
                throw new InvalidDataException($"instrumentation data cut short at byte {o} of {bytes.Length}");
            }

            long v;
            switch (size)
            {
                case 1:
                    v = b >> 1;
                    if ((b & 1) != 0) v |= unchecked((long)0xffffffffffffffc0L);
                    break;
                case 2:
                    int s = (b & 0x3f) << 8 | bytes[o + 1];
                    v = s >> 1;
                    if ((s & 1) != 0) v |= unchecked((long)0xffffffffffffe000L);
                    break;
                case 9:
                    v = 0;
                    for (int i = 1; i <= 8; i++) v = (v << 8) | bytes[o + i];
                    break;
                default:
                    v = (int)((uint)bytes[o + 1] << 24 | (uint)bytes[o + 2] << 16 | (uint)bytes[o + 3] << 8 | bytes[o + 4]);
                    break;
            }

            o += size;
            yield return v;
        }
    }

    /// <summary>
    /// Reads a schema and its data. Compressed streams (the runtime's) carry every field and value as
    /// a delta from the previous one of its sort; the .mibc carries absolute values
    /// (MIbcProfileParser calls ParsePgoData with longsAreCompressed: false).
    /// </summary>
    /// <exception cref="InvalidDataException">an unknown kind, or a stream without the end marker</exception>
    public static List<SchemaEntry> Parse(IEnumerable<long> values, bool compressed)
    {
        var result = new List<SchemaEntry>();
        int kind = 0, il = 0, count = 0, other = 0;
        int state = NewEntry, toRead = 0;
        long lastData = 0, lastType = 0, lastMethod = 0;
        SchemaEntry? current = null;
        foreach (long value in values)
        {
            if (toRead > 0 && current is not null)
            {
                int index = current.Count - toRead;
                switch (current.Marshal)
                {
                    case FourByte or EightByte:
                        lastData = compressed ? lastData + value : value;
                        current.Data[index] = lastData;
                        break;
                    case TypeHandle:
                        lastType = compressed ? lastType + value : value;
                        current.Data[index] = lastType;
                        break;
                    case MethodHandle:
                        lastMethod = compressed ? lastMethod + value : value;
                        current.Data[index] = lastMethod;
                        break;
                }

                if (--toRead == 0)
                {
                    result.Add(current);
                    current = null;
                }

                continue;
            }

            if (state == NewEntry)
            {
                state = (int)value;
                continue;
            }

            if ((state & ILOffsetBit) != 0) { il = compressed ? il + (int)value : (int)value; state &= ~ILOffsetBit; }
            else if ((state & KindBit) != 0) { kind = compressed ? kind + (int)value : (int)value; state &= ~KindBit; }
            else if ((state & CountBit) != 0) { count = compressed ? count + (int)value : (int)value; state &= ~CountBit; }
            else if ((state & OtherBit) != 0) { other = compressed ? other + (int)value : (int)value; state &= ~OtherBit; }

            if (state != 0)
            {
                continue;
            }

            state = NewEntry;
            if (kind == 0)
            {
                return result; // InstrumentationKind.Done
            }

            var entry = new SchemaEntry { Kind = kind, ILOffset = il, Count = count, Other = other };
            if (entry.Marshal == 0)
            {
                result.Add(entry);
            }
            else if (entry.IsCount || entry.IsHandle)
            {
                entry.Data = new long[count];
                if (count == 0)
                {
                    result.Add(entry);
                }
                else
                {
                    current = entry;
                    toRead = count;
                }
            }
            else
            {
                throw new InvalidDataException($"unknown instrumentation kind 0x{kind:x}");
            }
        }

        throw new InvalidDataException("instrumentation data ends before the schema's end marker");
    }

    /// <summary>The sum of a schema's counts: which of two profiles of one method saw more.</summary>
    public static long Total(List<SchemaEntry> schema) =>
        schema.Where(s => s.IsCount).Sum(s => s.Data.Sum());

    /// <summary>Whether two schemas describe the same code (same entries in the same order), so that
    /// their counts can be added.</summary>
    public static bool SameShape(List<SchemaEntry> a, List<SchemaEntry> b) =>
        a.Count == b.Count && a.Zip(b).All(p =>
            p.First.Kind == p.Second.Kind && p.First.ILOffset == p.Second.ILOffset &&
            p.First.Count == p.Second.Count && p.First.Other == p.Second.Other);
}
