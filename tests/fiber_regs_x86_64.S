/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * For tests/test_fiber.c, part registers: both sides of a raw
 * ws__fiber_swap in assembly, so that no compiled code stands between the
 * patterns and the checks. Every callee-saved register of the System V
 * ABI (rbx rbp r12 r13 r14 r15) gets a pattern, the other side writes
 * other values into all of them, and the mask of what came back changed
 * is returned.
 */
        .text

/* uint64_t ws_test_regs_swap(void **save_sp [rdi], void *to_sp [rsi]) */
        .globl  ws_test_regs_swap
        .type   ws_test_regs_swap, @function
        .p2align 4
ws_test_regs_swap:
        .cfi_startproc
        pushq   %rbp
        .cfi_adjust_cfa_offset 8
        pushq   %rbx
        .cfi_adjust_cfa_offset 8
        pushq   %r12
        .cfi_adjust_cfa_offset 8
        pushq   %r13
        .cfi_adjust_cfa_offset 8
        pushq   %r14
        .cfi_adjust_cfa_offset 8
        pushq   %r15
        .cfi_adjust_cfa_offset 8
        subq    $8, %rsp                /* 16-byte aligned at the call */
        .cfi_adjust_cfa_offset 8
        movabsq $0x1111111111111111, %rbx
        movabsq $0x2222222222222222, %rbp
        movabsq $0x3333333333333333, %r12
        movabsq $0x4444444444444444, %r13
        movabsq $0x5555555555555555, %r14
        movabsq $0x6666666666666666, %r15
        xorl    %edx, %edx
        call    ws__fiber_swap
        xorl    %eax, %eax
        movabsq $0x1111111111111111, %rcx
        cmpq    %rcx, %rbx
        je      1f
        orq     $1, %rax
1:      movabsq $0x2222222222222222, %rcx
        cmpq    %rcx, %rbp
        je      2f
        orq     $2, %rax
2:      movabsq $0x3333333333333333, %rcx
        cmpq    %rcx, %r12
        je      3f
        orq     $4, %rax
3:      movabsq $0x4444444444444444, %rcx
        cmpq    %rcx, %r13
        je      4f
        orq     $8, %rax
4:      movabsq $0x5555555555555555, %rcx
        cmpq    %rcx, %r14
        je      5f
        orq     $16, %rax
5:      movabsq $0x6666666666666666, %rcx
        cmpq    %rcx, %r15
        je      6f
        orq     $32, %rax
6:      addq    $8, %rsp
        .cfi_adjust_cfa_offset -8
        popq    %r15
        .cfi_adjust_cfa_offset -8
        popq    %r14
        .cfi_adjust_cfa_offset -8
        popq    %r13
        .cfi_adjust_cfa_offset -8
        popq    %r12
        .cfi_adjust_cfa_offset -8
        popq    %rbx
        .cfi_adjust_cfa_offset -8
        popq    %rbp
        .cfi_adjust_cfa_offset -8
        ret
        .cfi_endproc
        .size   ws_test_regs_swap, .-ws_test_regs_swap

/* void ws_test_regs_body(void *pass [rdi], void *sps[2] [rsi]): forever,
   overwrite every callee-saved register, then swap to sps[0] saving in
   sps[1]. Entered from ws__fiber_entry (rsp = 8 mod 16). */
        .globl  ws_test_regs_body
        .type   ws_test_regs_body, @function
        .p2align 4
ws_test_regs_body:
        .cfi_startproc
        pushq   %rsi
        .cfi_adjust_cfa_offset 8
1:      movabsq $0xa1a1a1a1a1a1a1a1, %rbx
        movabsq $0xa2a2a2a2a2a2a2a2, %rbp
        movabsq $0xa3a3a3a3a3a3a3a3, %r12
        movabsq $0xa4a4a4a4a4a4a4a4, %r13
        movabsq $0xa5a5a5a5a5a5a5a5, %r14
        movabsq $0xa6a6a6a6a6a6a6a6, %r15
        movq    (%rsp), %rax
        leaq    8(%rax), %rdi           /* &sps[1] */
        movq    (%rax), %rsi            /* sps[0] */
        xorl    %edx, %edx
        call    ws__fiber_swap
        jmp     1b
        .cfi_endproc
        .size   ws_test_regs_body, .-ws_test_regs_body

        .section .note.GNU-stack,"",@progbits
