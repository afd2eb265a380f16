"""The dynamic symbols of an ELF shared object (64-bit, little-endian), read with the standard library alone: what
`nm -D` lists, for machines without binutils. Versions (`@GLIBC_2.2.5`) are not part of the names."""
import struct

SHT_DYNSYM = 11
SHN_UNDEF = 0


class ElfError(Exception):
    pass


def dynamic_symbols(path):
    """(defined, undefined): the names the object exports and the names it imports. ElfError when the file is not
    one this can read, a truncated or odd one included."""
    with open(path, "rb") as f:
        data = f.read()
    try:
        return read_dynamic_symbols(path, data)
    except (struct.error, ValueError, IndexError) as error:
        raise ElfError(f"{path}: its dynamic symbols cannot be read ({error})") from error


def read_dynamic_symbols(path, data):
    if data[:4] != b"\x7fELF":
        raise ElfError(f"{path} is not an ELF file")
    if data[4] != 2 or data[5] != 1:
        raise ElfError(f"{path} is not a 64-bit little-endian ELF file")
    section_offset, = struct.unpack_from("<Q", data, 0x28)
    entry_size, count = struct.unpack_from("<HH", data, 0x3A)
    if section_offset == 0 or count == 0:
        raise ElfError(f"{path} has no section headers")

    def section(index):
        # sh_name, sh_type, sh_flags, sh_addr, sh_offset, sh_size, sh_link, sh_info, sh_addralign, sh_entsize
        return struct.unpack_from("<IIQQQQIIQQ", data, section_offset + index * entry_size)

    defined, undefined = set(), set()
    for index in range(count):
        _, kind, _, _, offset, size, link, _, _, symbol_size = section(index)
        if kind != SHT_DYNSYM or symbol_size == 0:
            continue
        strings_offset = section(link)[4]
        for at in range(offset, offset + size, symbol_size):
            name_offset, _, _, shndx, _, _ = struct.unpack_from("<IBBHQQ", data, at)
            if name_offset == 0:
                continue
            end = data.index(b"\0", strings_offset + name_offset)
            name = data[strings_offset + name_offset:end].decode("utf-8", errors="replace")
            (undefined if shndx == SHN_UNDEF else defined).add(name)
    return defined, undefined
