using System.Buffers.Binary;
using System.Globalization;
using System.Runtime.InteropServices;
using Peregrine.Interop;

namespace Peregrine.Server.Hosting;

/// <summary>
/// Lets go of the Native AOT executable's dehydrated data once start-up is over. ILC stores the
/// runtime's type data compressed in the executable (a read-only section, 2 MiB for this
/// server); the runtime expands it into <c>.hydrated</c> before <c>Main</c> and never reads it
/// again, yet its pages stay mapped and resident for the life of the process. Dropping them
/// (<c>madvise(MADV_DONTNEED)</c> on a read-only mapping of the file) changes nothing the process
/// can observe: a read would only fault the page back in from the file (docs/performance.md,
/// "Dehydrated data after start-up").
/// </summary>
/// <remarks>
/// The runtime does not say where the data lies, so this reads it the way the runtime finds it:
/// the <c>__modules</c> section points at the module's ReadyToRun header, whose section table
/// has an entry for the dehydrated data (<c>ReadyToRunSectionType.DehydratedData</c>, 207).
/// Anything unexpected (not an ELF executable, no such section, a header of another shape, a
/// range outside one read-only mapping of the executable) leaves everything as it is: a JIT
/// process, whose executable is the dotnet host, has no <c>__modules</c>.
/// </remarks>
internal static class DehydratedData
{
    private const uint ReadyToRunSignature = 0x00525452; // "RTR\0"
    private const int DehydratedDataSection = 207;
    private const int HasEndPointer = 1;
    private const uint ProgramHeaderEntry = 6; // PT_PHDR

    /// <summary>Drops the dehydrated data's whole pages from memory; returns the bytes dropped, 0 when nothing was.</summary>
    public static long Release()
    {
        if (!PlatformParts.IsNative || RuntimeInformation.ProcessArchitecture is not (Architecture.X64 or Architecture.Arm64))
        {
            return 0;
        }

        try
        {
            var mappings = ExecutableMappings();
            return TryFind(mappings, out var start, out var end) ? Drop(mappings, start, end) : 0;
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException or FormatException or OverflowException or DllNotFoundException or EntryPointNotFoundException)
        {
            return 0;
        }
    }

    private static bool TryFind(List<Mapping> mappings, out nint start, out nint end)
    {
        start = end = 0;
        if (!TryReadModulesSection(out var modulesAddress, out var programHeaderAddress))
        {
            return false;
        }

        var loadedProgramHeaders = (nint)Libc.getauxval(Libc.AuxProgramHeaders);
        if (loadedProgramHeaders == 0)
        {
            return false;
        }

        // Every address is checked against the executable's mappings before it is read.
        var modules = loadedProgramHeaders - (nint)programHeaderAddress + (nint)modulesAddress;
        if (Containing(mappings, modules, modules + nint.Size) is null)
        {
            return false;
        }

        var header = Marshal.ReadIntPtr(modules);
        if (Containing(mappings, header, header + 16) is null || (uint)Marshal.ReadInt32(header) != ReadyToRunSignature)
        {
            return false;
        }

        int count = (ushort)Marshal.ReadInt16(header, 12);
        int entrySize = Marshal.ReadByte(header, 14);
        if (entrySize < 8 + (2 * nint.Size) || Containing(mappings, header, header + 16 + (count * entrySize)) is null)
        {
            return false;
        }

        for (var i = 0; i < count; i++)
        {
            var entry = header + 16 + (i * entrySize);
            if (Marshal.ReadInt32(entry) == DehydratedDataSection && (Marshal.ReadInt32(entry, 4) & HasEndPointer) != 0)
            {
                start = Marshal.ReadIntPtr(entry, 8);
                end = Marshal.ReadIntPtr(entry, 8 + nint.Size);
                return end > start;
            }
        }

        return false;
    }

    /// <summary>Reads the executable's section headers for the address of <c>__modules</c>, and its program headers for PT_PHDR's.</summary>
    private static bool TryReadModulesSection(out ulong modulesAddress, out ulong programHeaderAddress)
    {
        modulesAddress = programHeaderAddress = 0;
        using var file = new FileStream("/proc/self/exe", FileMode.Open, FileAccess.Read, FileShare.Read, bufferSize: 0);
        Span<byte> elf = stackalloc byte[64];
        if (file.Read(elf) != 64 || !elf[..4].SequenceEqual("\u007fELF"u8) || elf[4] != 2 /* 64-bit */ || elf[5] != 1 /* little-endian */)
        {
            return false;
        }

        var programHeaders = BinaryPrimitives.ReadUInt64LittleEndian(elf[0x20..]);
        var sectionHeaders = BinaryPrimitives.ReadUInt64LittleEndian(elf[0x28..]);
        int programHeaderSize = BinaryPrimitives.ReadUInt16LittleEndian(elf[0x36..]);
        int programHeaderCount = BinaryPrimitives.ReadUInt16LittleEndian(elf[0x38..]);
        int sectionHeaderSize = BinaryPrimitives.ReadUInt16LittleEndian(elf[0x3A..]);
        int sectionHeaderCount = BinaryPrimitives.ReadUInt16LittleEndian(elf[0x3C..]);
        int namesIndex = BinaryPrimitives.ReadUInt16LittleEndian(elf[0x3E..]);
        if (programHeaderSize < 56 || sectionHeaderSize < 64 || namesIndex >= sectionHeaderCount || sectionHeaderCount > 4096 || programHeaderCount > 256)
        {
            return false;
        }

        var phdrs = ReadAt(file, (long)programHeaders, programHeaderSize * programHeaderCount);
        for (var i = 0; i < programHeaderCount; i++)
        {
            var phdr = phdrs.AsSpan(i * programHeaderSize);
            if (BinaryPrimitives.ReadUInt32LittleEndian(phdr) == ProgramHeaderEntry)
            {
                programHeaderAddress = BinaryPrimitives.ReadUInt64LittleEndian(phdr[0x10..]);
            }
        }

        var shdrs = ReadAt(file, (long)sectionHeaders, sectionHeaderSize * sectionHeaderCount);
        var namesHeader = shdrs.AsSpan(namesIndex * sectionHeaderSize);
        var namesSize = BinaryPrimitives.ReadUInt64LittleEndian(namesHeader[0x20..]);
        if (programHeaderAddress == 0 || namesSize > 1 << 20)
        {
            return false;
        }

        var names = ReadAt(file, (long)BinaryPrimitives.ReadUInt64LittleEndian(namesHeader[0x18..]), (int)namesSize);
        for (var i = 0; i < sectionHeaderCount; i++)
        {
            var shdr = shdrs.AsSpan(i * sectionHeaderSize);
            var name = BinaryPrimitives.ReadUInt32LittleEndian(shdr);
            if (name < names.Length && names.AsSpan((int)name).StartsWith("__modules\0"u8))
            {
                modulesAddress = BinaryPrimitives.ReadUInt64LittleEndian(shdr[0x10..]);
                return BinaryPrimitives.ReadUInt64LittleEndian(shdr[0x20..]) >= 8;
            }
        }

        return false;
    }

    private static byte[] ReadAt(FileStream file, long offset, int length)
    {
        var bytes = new byte[length];
        file.Position = offset;
        file.ReadExactly(bytes);
        return bytes;
    }

    private sealed record Mapping(nint Low, nint High, string Permissions);

    /// <summary>The mappings of the executable file, from <c>/proc/self/maps</c>.</summary>
    private static List<Mapping> ExecutableMappings()
    {
        var mappings = new List<Mapping>();
        var executable = File.ResolveLinkTarget("/proc/self/exe", returnFinalTarget: false)?.FullName;
        foreach (var line in File.ReadLines("/proc/self/maps"))
        {
            // 55f7ca005000-55f7ca447000 r--p 00972000 fe:01 1234  /path/to/peregrine
            var fields = line.Split(' ', 6, StringSplitOptions.RemoveEmptyEntries);
            if (fields.Length == 6 && fields[5].Trim() == executable)
            {
                var dash = fields[0].IndexOf('-');
                mappings.Add(new Mapping(
                    nint.Parse(fields[0].AsSpan(0, dash), NumberStyles.HexNumber, CultureInfo.InvariantCulture),
                    nint.Parse(fields[0].AsSpan(dash + 1), NumberStyles.HexNumber, CultureInfo.InvariantCulture),
                    fields[1]));
            }
        }

        return mappings;
    }

    /// <summary>The one mapping of the executable that holds [<paramref name="start"/>, <paramref name="end"/>), if any.</summary>
    private static Mapping? Containing(List<Mapping> mappings, nint start, nint end)
        => mappings.Find(m => start >= m.Low && end <= m.High);

    private static long Drop(List<Mapping> mappings, nint start, nint end)
    {
        // Only whole pages inside the data, and only from a read-only private mapping of the
        // file: there, MADV_DONTNEED can never lose a byte.
        var pageSize = Environment.SystemPageSize;
        var first = (start + pageSize - 1) & ~(nint)(pageSize - 1);
        var last = end & ~(nint)(pageSize - 1);
        if (last <= first || Containing(mappings, first, last)?.Permissions != "r--p")
        {
            return 0;
        }

        return Libc.madvise(first, (nuint)(last - first), Libc.DontNeed) == 0 ? last - first : 0;
    }
}
