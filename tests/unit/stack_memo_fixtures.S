// Frames for tests/unit/stack_memo_test.cpp that the compiler does not make on demand (x86-64, System V).
//
// Each kind of frame is called from two callers, stack_memo_KIND_small (a 32-byte frame) and stack_memo_KIND_large
// (a 16-byte frame, which asks the frame for 16 more bytes of padding, or, realigned, gets them from the alignment at
// some depths of the stack): under either, the frames from the capture up to the frame of that kind sit at the same
// addresses, while the frame's own CFA, and so the slot of its return address, is 16 bytes apart. Under _large, the
// slot _small's return address was read from lies in the frame's padding, where it still holds that address: only
// the frame's rbp (or the rule that gives its CFA) tells the two stacks apart.
//
//   size_t stack_memo_KIND_small(size_t (*fn)(void*), void* arg), and _large: fn(arg), through
//   fp     a frame-pointer frame (CFA = rbp + 16)
//   rbp32  an rbp-based frame whose CFA is rbp + 32 (as libffi's ffi_call_unix64)
//   drap   a realigned frame (64 bytes) whose CFA is read from the stack (GCC's DRAP: CFA = *(rbp - 8))
// fn is called through keep_rbp, which saves rbp in a frame of its own, between the capture and the frame.

        .text

// size_t keep_rbp(size_t (*fn)(void*), void* arg): fn(arg), the caller's rbp saved here.
        .type keep_rbp, @function
keep_rbp:
        .cfi_startproc
        push %rbp
        .cfi_def_cfa_offset 16
        .cfi_offset %rbp, -16
        mov %rdi, %rax
        mov %rsi, %rdi
        call *%rax
        pop %rbp
        .cfi_restore %rbp
        .cfi_def_cfa_offset 8
        ret
        .cfi_endproc
        .size keep_rbp, .-keep_rbp

// The frames: rdi = fn, rsi = arg (passed on to keep_rbp), rdx = padding (a multiple of 16).
        .type fp_frame, @function
fp_frame:
        .cfi_startproc
        push %rbp
        .cfi_def_cfa_offset 16
        .cfi_offset %rbp, -16
        mov %rsp, %rbp
        .cfi_def_cfa_register %rbp
        sub $48, %rsp
        sub %rdx, %rsp
        call keep_rbp
        leave
        .cfi_restore %rbp
        .cfi_def_cfa %rsp, 8
        ret
        .cfi_endproc
        .size fp_frame, .-fp_frame

        .type rbp32_frame, @function
rbp32_frame:
        .cfi_startproc
        push %rbp
        .cfi_def_cfa_offset 16
        .cfi_offset %rbp, -16
        sub $16, %rsp
        .cfi_def_cfa_offset 32
        mov %rsp, %rbp
        .cfi_def_cfa_register %rbp
        sub $32, %rsp
        sub %rdx, %rsp
        call keep_rbp
        mov %rbp, %rsp
        .cfi_def_cfa_register %rsp
        add $16, %rsp
        .cfi_def_cfa_offset 16
        pop %rbp
        .cfi_restore %rbp
        .cfi_def_cfa_offset 8
        ret
        .cfi_endproc
        .size rbp32_frame, .-rbp32_frame

        .type drap_frame, @function
drap_frame:
        .cfi_startproc
        lea 8(%rsp), %r10
        .cfi_def_cfa %r10, 0
        and $-64, %rsp
        push -8(%r10)
        push %rbp
        mov %rsp, %rbp
        .cfi_escape 0x10, 0x06, 0x02, 0x76, 0x00  // DW_CFA_expression: rbp saved at rbp + 0
        push %r10
        .cfi_escape 0x0f, 0x03, 0x76, 0x78, 0x06  // DW_CFA_def_cfa_expression: CFA = *(rbp - 8)
        sub $40, %rsp
        sub %rdx, %rsp
        call keep_rbp
        lea -8(%rbp), %rsp
        pop %r10
        .cfi_def_cfa %r10, 0
        pop %rbp
        .cfi_restore %rbp
        lea -8(%r10), %rsp
        .cfi_def_cfa %rsp, 8
        ret
        .cfi_endproc
        .size drap_frame, .-drap_frame

// The two callers of one kind of frame.
.macro callers kind, large_padding
        .globl stack_memo_\kind\()_small
        .hidden stack_memo_\kind\()_small
        .type stack_memo_\kind\()_small, @function
stack_memo_\kind\()_small:
        .cfi_startproc
        sub $24, %rsp
        .cfi_def_cfa_offset 32
        xor %edx, %edx
        call \kind\()_frame
        add $24, %rsp
        .cfi_def_cfa_offset 8
        ret
        .cfi_endproc
        .size stack_memo_\kind\()_small, .-stack_memo_\kind\()_small

        .globl stack_memo_\kind\()_large
        .hidden stack_memo_\kind\()_large
        .type stack_memo_\kind\()_large, @function
stack_memo_\kind\()_large:
        .cfi_startproc
        sub $8, %rsp
        .cfi_def_cfa_offset 16
        mov $\large_padding, %edx
        call \kind\()_frame
        add $8, %rsp
        .cfi_def_cfa_offset 8
        ret
        .cfi_endproc
        .size stack_memo_\kind\()_large, .-stack_memo_\kind\()_large
.endm

        callers fp, 16
        callers rbp32, 16
        callers drap, 0

// size_t stack_memo_local_in_rbp(capture, frames, max_frames, skip, machinery, cut): capture(frames, max_frames,
// skip, machinery, cut) called with rbp pointing at a local of this frame, whose CFA comes from rsp (rbp + 24): a
// compiler's frame that keeps a local's address in rbp across its call of the capture.
        .globl stack_memo_local_in_rbp
        .type stack_memo_local_in_rbp, @function
stack_memo_local_in_rbp:
        .cfi_startproc
        push %rbp
        .cfi_def_cfa_offset 16
        .cfi_offset %rbp, -16
        sub $16, %rsp
        .cfi_def_cfa_offset 32
        movq $0, (%rsp)
        lea 8(%rsp), %rbp
        mov %rdi, %rax
        mov %rsi, %rdi
        mov %rdx, %rsi
        mov %rcx, %rdx
        mov %r8, %rcx
        mov %r9, %r8
        call *%rax
        add $16, %rsp
        .cfi_def_cfa_offset 16
        pop %rbp
        .cfi_restore %rbp
        .cfi_def_cfa_offset 8
        ret
        .cfi_endproc
        .size stack_memo_local_in_rbp, .-stack_memo_local_in_rbp

        .section .note.GNU-stack, "", @progbits
