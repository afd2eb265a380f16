"""The dynamic symbols of an ELF shared object (64-bit, little-endian), read with the standard library alone: what
`nm -D` lists, for machines without binutils. Versions (`@GLIBC_2.2.5`) are not part of the names; dynamic_linkage
adds them, with the soname, the needed libraries and the version nodes (what `readelf -d -V` shows)."""
import struct

SHT_DYNSYM = 11
SHN_UNDEF = 0


class ElfError(Exception):
    pass


def read_elf(path, reader, what):
    """reader(path, data) over the file's bytes; ElfError when the file is not one this can read, a truncated or odd
    one included (what: what could not be read, for the message)."""
    with open(path, "rb") as f:
        data = f.read()
    try:
        return reader(path, data)
    except (struct.error, ValueError, IndexError) as error:
        raise ElfError(f"{path}: its {what} cannot be read ({error})") from error


def section_headers(path, data):
    """(offset, entry size, count) of the section header table of a 64-bit little-endian ELF file."""
    if data[:4] != b"\x7fELF":
        raise ElfError(f"{path} is not an ELF file")
    if data[4] != 2 or data[5] != 1:
        raise ElfError(f"{path} is not a 64-bit little-endian ELF file")
    section_offset, = struct.unpack_from("<Q", data, 0x28)
    entry_size, count = struct.unpack_from("<HH", data, 0x3A)
    if section_offset == 0 or count == 0:
        raise ElfError(f"{path} has no section headers")
    return section_offset, entry_size, count


def dynamic_symbols(path):
    """(defined, undefined): the names the object exports and the names it imports. ElfError when the file is not
    one this can read, a truncated or odd one included."""
    return read_elf(path, read_dynamic_symbols, "dynamic symbols")


def read_dynamic_symbols(path, data):
    section_offset, entry_size, count = section_headers(path, data)

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


SHT_DYNAMIC = 6
SHT_GNU_VERDEF = 0x6FFFFFFD
SHT_GNU_VERNEED = 0x6FFFFFFE
SHT_GNU_VERSYM = 0x6FFFFFFF
DT_NEEDED, DT_SONAME = 1, 14
VER_FLG_BASE = 1
VERSYM_HIDDEN = 0x8000  # a non-default version (name@node, not name@@node): still that node's definition


class DynamicLinkage:
    """What the dynamic linker reads of an object: its soname and needed libraries, the version nodes it defines
    (`readelf -V`'s "Version definition", less the base one that repeats the soname), and its dynamic symbols with
    their version node, None for an unversioned one: defined, a set of (name, node), and undefined, a set of
    (name, node), whose nodes' libraries are in node_files (node -> the soname it is required from)."""

    def __init__(self, soname, needed, nodes, defined, undefined, node_files):
        self.soname, self.needed, self.nodes = soname, needed, nodes
        self.defined, self.undefined, self.node_files = defined, undefined, node_files


def dynamic_linkage(path):
    """The DynamicLinkage of the ELF object at path; ElfError when the file is not one this can read."""
    return read_elf(path, read_dynamic_linkage, "dynamic linkage")


def read_dynamic_linkage(path, data):
    section_offset, entry_size, count = section_headers(path, data)
    # index -> (sh_type, sh_offset, sh_size, sh_link, sh_info, sh_entsize)
    sections = []
    for index in range(count):
        _, kind, _, _, offset, size, link, info, _, item_size = struct.unpack_from(
            "<IIQQQQIIQQ", data, section_offset + index * entry_size)
        sections.append((kind, offset, size, link, info, item_size))

    def string(table, at):
        start = sections[table][1] + at
        return data[start:data.index(b"\0", start)].decode("utf-8", errors="replace")

    def of_kind(kind):
        return [s for s in sections if s[0] == kind]

    soname, needed = None, []
    for _, offset, size, link, _, _ in of_kind(SHT_DYNAMIC):
        for at in range(offset, offset + size, 16):
            tag, value = struct.unpack_from("<qQ", data, at)
            if tag == DT_SONAME:
                soname = string(link, value)
            elif tag == DT_NEEDED:
                needed.append(string(link, value))

    # Version indexes: those of Elf64_Verdef entries (vd_ndx) name a node this object defines, those of
    # Elf64_Vernaux entries (vna_other) a node it requires of a needed library.
    node_of, nodes, node_files = {}, set(), {}
    for _, offset, _, link, entries, _ in of_kind(SHT_GNU_VERDEF):
        at = offset
        for _ in range(entries):
            _, flags, index, _, _, aux, following = struct.unpack_from("<HHHHIII", data, at)
            name_at, = struct.unpack_from("<I", data, at + aux)  # the first Elf64_Verdaux names the node
            node_of[index] = string(link, name_at)
            if not flags & VER_FLG_BASE:
                nodes.add(node_of[index])
            at += following
    for _, offset, _, link, entries, _ in of_kind(SHT_GNU_VERNEED):
        at = offset
        for _ in range(entries):
            _, aux_count, file_at, aux, following = struct.unpack_from("<HHIII", data, at)
            aux_at = at + aux
            for _ in range(aux_count):
                _, _, index, name_at, aux_following = struct.unpack_from("<IHHII", data, aux_at)
                node_of[index] = string(link, name_at)
                node_files[node_of[index]] = string(link, file_at)
                aux_at += aux_following
            at += following

    defined, undefined = set(), set()
    versym = of_kind(SHT_GNU_VERSYM)
    for _, offset, size, link, _, item_size in of_kind(SHT_DYNSYM):
        for number, at in enumerate(range(offset, offset + size, item_size)):
            name_at, _, _, shndx, _, _ = struct.unpack_from("<IBBHQQ", data, at)
            if name_at == 0:
                continue
            index = 1  # VER_NDX_GLOBAL: unversioned
            if versym:
                index, = struct.unpack_from("<H", data, versym[0][1] + 2 * number)
                index &= ~VERSYM_HIDDEN
            # 0 and 1 (local, global) are no node; a definition under the base node (the soname) is unversioned too.
            node = node_of.get(index) if index > 1 else None
            if node is not None and shndx != SHN_UNDEF and node not in nodes:
                node = None
            (undefined if shndx == SHN_UNDEF else defined).add((string(link, name_at), node))
    return DynamicLinkage(soname, needed, nodes, defined, undefined, node_files)
