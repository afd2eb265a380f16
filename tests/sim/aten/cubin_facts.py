#!/usr/bin/env python3
"""What a PyTorch wheel's device code says about its kernels: the facts libsimaten.so's models are checked against.

usage: cubin_facts.py LIBTORCH_CUDA_SO NAME_PART [NAME_PART...] [--sm 90]

For every kernel of the sm_XX cubins in LIBTORCH_CUDA_SO's .nv_fatbin whose mangled name contains a NAME_PART:
  - its parameters as the cubin's .nv.info EIATTR_KPARAM_INFO gives them (ordinal, offset, size), and
  - its __assertfail calls: the line (the immediate moved into R8 before the call, IMAD.MOV.U32 or MOV) and the
    strings it loads just before (message, __FILE__, __func__; a nearby one may show up too): from constant bank 4
    slots, or (older nvcc) from addresses relocated into the instructions.
Reading SASS this way is specific to sm_90's encoding; the strings and parameter tables are architecture-neutral.
Compressed fatbin entries are decompressed: zstd (flag 0x8000; CUDA 12.8+'s nvcc) with the zstd command, LZ4 (flag 0x2000;
the older default, torch 2.4-2.8) here, as an LZ4 block (the format's own spec: lz4/doc/lz4_Block_format.md).

e.g. cubin_facts.py .../torch/lib/libtorch_cuda.so nll_loss_forward_reduce_cuda_kernel_2dIfflE
"""
import struct
import subprocess
import sys


def sections(data):
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    table = []
    for i in range(shnum):
        name, kind, _flags, _addr, off, size, link, info, _align, _entsize = struct.unpack_from(
            "<IIQQQQIIQQ", data, shoff + i * shentsize)
        table.append({"name": name, "type": kind, "off": off, "size": size, "link": link, "info": info})
    names = table[shstrndx]["off"]
    for s in table:
        s["name"] = cstring(data, names + s["name"])
    return table


def cstring(data, off):
    return data[off:data.index(b"\0", off)].decode("latin1")


def cubins(library, sm):
    data = open(library, "rb").read()
    fatbin = next(s for s in sections(data) if s["name"] == ".nv_fatbin")
    blob = data[fatbin["off"]:fatbin["off"] + fatbin["size"]]
    pos = 0
    while pos + 16 <= len(blob):
        magic, _version, header, size = struct.unpack_from("<IHHQ", blob, pos)
        if magic != 0xBA55ED50:
            pos += 8
            continue
        entry, end = pos + header, pos + header + size
        while entry < end:
            kind, _v, entry_header, padded = struct.unpack_from("<HHIQ", blob, entry)
            payload_size, = struct.unpack_from("<Q", blob, entry + 16)
            arch, = struct.unpack_from("<I", blob, entry + 28)
            flags, = struct.unpack_from("<Q", blob, entry + 40)
            if kind == 2 and arch == sm:
                payload = blob[entry + entry_header:entry + entry_header + payload_size]
                if flags & 0x8000:
                    payload = subprocess.run(["zstd", "-dc"], input=payload, capture_output=True, check=True).stdout
                elif flags & 0x2000:
                    payload = lz4_block(payload)
                yield payload
            entry += entry_header + padded
        pos = end


def lz4_block(data):
    """An LZ4 block decompressed: sequences of a token (literal length, match length - 4), the literals, and a
    2-byte offset back into the output to copy the match from; the last sequence is literals only."""
    def length(nibble, i):
        """A length whose 4-bit start is nibble: 15 continues in bytes, each added, until one is not 255."""
        total = nibble
        if nibble == 15:
            while True:
                extra = data[i]
                i += 1
                total += extra
                if extra != 255:
                    break
        return total, i

    out = bytearray()
    i = 0
    while i < len(data):
        token = data[i]
        literals, i = length(token >> 4, i + 1)
        out += data[i:i + literals]
        i += literals
        if i >= len(data):
            break
        offset = data[i] | data[i + 1] << 8
        match, i = length(token & 15, i + 2)
        match += 4
        start = len(out) - offset
        for k in range(match):  # byte by byte: a match may overlap what it writes
            out.append(out[start + k])
    return bytes(out)


def kernel_facts(cubin, parts):
    table = sections(cubin)
    by_name = {s["name"]: i for i, s in enumerate(table)}
    symtab = next(s for s in table if s["type"] == 2)
    strtab = table[symtab["link"]]
    symbols = []
    for i in range(symtab["size"] // 24):
        name, _info, _other, shndx, value, _size = struct.unpack_from("<IBBHQQ", cubin, symtab["off"] + i * 24)
        symbols.append((cstring(cubin, strtab["off"] + name), shndx, value))
    init = by_name.get(".nv.global.init")

    def relocated_strings(rela_name):
        """{offset: string} of the relocations of section rela_name that point into .nv.global.init (the strings)."""
        strings = {}
        rela = by_name.get(rela_name)
        if init is None or rela is None:
            return strings
        r = table[rela]
        for j in range(r["size"] // 24):
            off, info, addend = struct.unpack_from("<QQq", cubin, r["off"] + j * 24)
            _name, shndx, value = symbols[info >> 32]
            if shndx == init:
                strings[off] = cstring(cubin, table[init]["off"] + value + addend)
        return strings

    slots = relocated_strings(".rela.nv.constant4")  # constant bank 4 slot -> the string it holds
    for s in table:
        if not s["name"].startswith(".text.") or not any(p in s["name"] for p in parts):
            continue
        kernel = s["name"][len(".text."):]
        params = []
        info = by_name.get(".nv.info." + kernel)
        if info is not None:
            p, end = table[info]["off"], table[info]["off"] + table[info]["size"]
            while p < end:
                fmt, attr = cubin[p], cubin[p + 1]
                if fmt == 4:
                    size, = struct.unpack_from("<H", cubin, p + 2)
                    body, p = cubin[p + 4:p + 4 + size], p + 4 + size
                else:
                    body, p = cubin[p + 2:p + 4], p + 4
                if attr == 0x17:  # EIATTR_KPARAM_INFO
                    _index, ordinal, offset, flags = struct.unpack_from("<IHHI", body, 0)
                    params.append((ordinal, offset, (flags >> 18) & 0x3FFF))
                elif attr == 0x45 and len(body) == 12:
                    # The table's second form, in kernels whose parameters exceed the 14-bit size field (CUDA 12.1+'s
                    # 32 KiB parameters, e.g. multi_tensor_apply_kernel's TensorListMetadata): the size as a whole
                    # word. Read from the wheel: ordinal 0 at offset 0, 24200 bytes; ordinals 1, 2 one byte each.
                    _index, ordinal, offset, size = struct.unpack_from("<IHHI", body, 0)
                    params.append((ordinal, offset, size))
        code = cubin[s["off"]:s["off"] + s["size"]]
        # Older nvcc (torch 2.4's CUDA 12.1) puts the strings' addresses into the instructions themselves: relocations
        # of the kernel's text (its .rela.text section) against .nv.global.init, instead of constant bank 4 slots.
        text_strings = {off - off % 16: text for off, text in relocated_strings(".rela.text." + kernel).items()}
        asserts = []
        for k in range(0, len(code), 16):
            word, = struct.unpack_from("<Q", code, k)
            op, dst, src = word & 0xFFF, (word >> 16) & 0xFF, (word >> 24) & 0xFF
            line = word >> 32
            if not ((op == 0x424 and dst == 8 and src == 255) or (op == 0x802 and dst == 8)) or not 0 < line < 100000:
                continue
            strings = []
            for b in range(max(0, k - 16 * 24), k, 16):
                w, = struct.unpack_from("<Q", code, b)
                text = None
                if (w & 0xFFF) in (0xAB9, 0xB82, 0xA02) and ((w >> 54) & 0x1F) == 4:
                    text = slots.get((w >> 38) & 0xFFFF)
                text = text or text_strings.get(b)
                if text is not None and text not in strings:
                    strings.append(text)
            if strings:
                asserts.append((line, strings))
        yield kernel, sorted(params), asserts


def main():
    args = sys.argv[1:]
    sm = 90
    if "--sm" in args:
        at = args.index("--sm")
        sm = int(args[at + 1])
        del args[at:at + 2]
    if len(args) < 2:
        sys.exit(__doc__)
    library, parts = args[0], args[1:]
    for cubin in cubins(library, sm):
        if not any(p.encode() in cubin for p in parts):
            continue
        for kernel, params, asserts in kernel_facts(cubin, parts):
            demangled = subprocess.run(["c++filt", kernel], capture_output=True, text=True).stdout.strip()
            print(kernel)
            print("  " + demangled[:400])
            print("  params (ordinal, offset, size):", params)
            for line, strings in sorted(set((l, tuple(s)) for l, s in asserts)):
                print(f"  assert line {line}: " + " | ".join(strings))


if __name__ == "__main__":
    main()
