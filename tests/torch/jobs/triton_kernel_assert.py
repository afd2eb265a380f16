"""A hand-written Triton kernel, built with debug on so that its tl.device_assert is compiled in: it gathers rows
of a table by index and checks each index. A batch with the index 100 of a 100-row table fires it on the device
(the launch is marked `# the culprit`)."""
import torch
import triton
import triton.language as tl


@triton.jit(debug=True)
def gather_rows(table_ptr, index_ptr, out_ptr, n_rows, n_out, width: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_out
    row = tl.load(index_ptr + offsets // width, mask=mask, other=0)
    tl.device_assert((row >= 0) & (row < n_rows), "row index out of range")
    value = tl.load(table_ptr + row * width + offsets % width, mask=mask)
    tl.store(out_ptr + offsets, value, mask=mask)


torch.manual_seed(0)
table = torch.randn(100, 8).cuda()
for step in range(3):
    index = torch.randint(0, 100, (40,))
    if step == 2:
        index[33] = 100  # the bad value: row 100 of 100
    index = index.cuda()
    out = torch.empty(40, 8, device="cuda")
    grid = (triton.cdiv(out.numel(), 128),)
    gather_rows[grid](table, index, out, 100, out.numel(), width=8, BLOCK=128)  # the culprit
    print("step", step, "sum", round(out.sum().item(), 4))
