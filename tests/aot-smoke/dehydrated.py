"""Checks that a running Native AOT server has let go of its dehydrated data.

    python3 dehydrated.py PID EXECUTABLE

Finds the data as the runtime does, but from the file alone: the __modules section holds a
pointer (a relative relocation) to the ReadyToRun header, whose section table has an entry for
the dehydrated data (207). Then reads /proc/PID/pagemap: no whole page of that range may be
present. Prints the range and the page counts; exits 1 when any page is present, 2 when the
data cannot be found in the file.
"""
import struct
import sys

DEHYDRATED_DATA = 207
RTR = 0x00525452


def main(pid, path):
    data = open(path, "rb").read()
    (phoff, shoff) = struct.unpack_from("<QQ", data, 0x20)
    (phentsize, phnum, shentsize, shnum, shstrndx) = struct.unpack_from("<HHHHH", data, 0x36)
    loads = []
    for i in range(phnum):
        (p_type, _, p_offset, p_vaddr, _, p_filesz) = struct.unpack_from("<IIQQQQ", data, phoff + i * phentsize)
        if p_type == 1:
            loads.append((p_vaddr, p_offset, p_filesz))

    def file_offset(vaddr):
        for (start, offset, size) in loads:
            if start <= vaddr < start + size:
                return offset + vaddr - start
        raise LookupError(hex(vaddr))

    sections = {}
    names_offset = struct.unpack_from("<Q", data, shoff + shstrndx * shentsize + 0x18)[0]
    for i in range(shnum):
        (name, _, _, addr, offset, size) = struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize)
        end = data.index(b"\0", names_offset + name)
        sections[data[names_offset + name:end].decode()] = (addr, offset, size)

    # Relative relocations: where the loader writes base + addend.
    relocated = {}
    (_, rela_offset, rela_size) = sections[".rela.dyn"]
    for i in range(rela_size // 24):
        (r_offset, r_info, r_addend) = struct.unpack_from("<QQq", data, rela_offset + i * 24)
        if r_info & 0xFFFFFFFF == 8:  # R_X86_64_RELATIVE
            relocated[r_offset] = r_addend

    def pointer(vaddr):
        return relocated.get(vaddr, struct.unpack_from("<Q", data, file_offset(vaddr))[0])

    header = pointer(sections["__modules"][0])
    signature, = struct.unpack_from("<I", data, file_offset(header))
    if signature != RTR:
        print(f"dehydrated.py: no ReadyToRun header at {header:#x}")
        return 2
    (count, entry_size) = struct.unpack_from("<HB", data, file_offset(header) + 12)
    for i in range(count):
        entry = header + 16 + i * entry_size
        if struct.unpack_from("<i", data, file_offset(entry))[0] == DEHYDRATED_DATA:
            start, end = pointer(entry + 8), pointer(entry + 16)
            break
    else:
        print("dehydrated.py: the executable has no dehydrated data")
        return 2

    base = None
    for line in open(f"/proc/{pid}/maps"):
        fields = line.split()
        if len(fields) >= 6 and fields[2] == "00000000" and fields[5] == path:
            base = int(fields[0].split("-")[0], 16)
            break
    if base is None:
        print(f"dehydrated.py: {path} is not mapped in process {pid}")
        return 2

    page = 4096
    first = (base + start + page - 1) // page
    last = (base + end) // page
    present = 0
    with open(f"/proc/{pid}/pagemap", "rb") as pagemap:
        pagemap.seek(first * 8)
        entries = pagemap.read((last - first) * 8)
    for i in range(last - first):
        if struct.unpack_from("<Q", entries, i * 8)[0] >> 63:
            present += 1
    print(f"dehydrated.py: dehydrated data {end - start} bytes, {last - first} whole pages, {present} resident")
    return 1 if present else 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]), sys.argv[2]))
