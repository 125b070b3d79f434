/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * The context switch for x86-64, System V ABI (src/platform/fiber.h).
 *
 * Saved on the stack of the context being left, 64 bytes from the saved
 * stack pointer up:
 *    0  MXCSR (4 bytes) and the x87 control word (2 bytes)
 *    8  r15
 *   16  r14
 *   24  r13
 *   32  r12
 *   40  rbx
 *   48  rbp
 *   56  the return address (pushed by the call to ws__fiber_swap)
 * and rsp itself in *save_sp. That is every register the ABI makes
 * callee-saved: the general ones above, rsp, and the control bits of
 * MXCSR and the x87 control word ("callee-saved" in the ABI's words; the
 * status flags travel with MXCSR too, which the ABI allows). Everything
 * else (rax, rcx, rdx, rsi, rdi, r8-r11, xmm0-15, the x87 stack, the
 * status words) is caller-saved: the compiler has kept what it needs
 * before calling us. The direction flag is clear at every call.
 *
 * A context that has not run yet is a frame ws__fiber_prepare writes in
 * the same layout: r12 = main, r13 = arg, rbx = rbp = r14 = r15 = 0, the
 * creator's MXCSR and control word, and ws__fiber_entry as the return
 * address; ws__fiber_swap's ret lands there with `pass` in rax.
 *
 * CET: endbr64 at each entry when the compiler targets IBT; the objects
 * then say IBT (not SHSTK: the switch does not move the shadow stack, so a
 * program holding it must not run with shadow stacks on).
 */
#if defined(__CET__) && (__CET__ & 1)
#define WS_ENDBR endbr64
#define WS_JMP notrack jmp
#else
#define WS_ENDBR
#define WS_JMP jmp
#endif

        .text

/* void *ws__fiber_swap(void **save_sp [rdi], void *to_sp [rsi], void *pass [rdx]) */
        .globl  ws__fiber_swap
        .hidden ws__fiber_swap
        .type   ws__fiber_swap, @function
        .p2align 4
ws__fiber_swap:
        .cfi_startproc
        WS_ENDBR
        pushq   %rbp
        .cfi_adjust_cfa_offset 8
        .cfi_rel_offset %rbp, 0
        pushq   %rbx
        .cfi_adjust_cfa_offset 8
        .cfi_rel_offset %rbx, 0
        pushq   %r12
        .cfi_adjust_cfa_offset 8
        .cfi_rel_offset %r12, 0
        pushq   %r13
        .cfi_adjust_cfa_offset 8
        .cfi_rel_offset %r13, 0
        pushq   %r14
        .cfi_adjust_cfa_offset 8
        .cfi_rel_offset %r14, 0
        pushq   %r15
        .cfi_adjust_cfa_offset 8
        .cfi_rel_offset %r15, 0
        subq    $8, %rsp
        .cfi_adjust_cfa_offset 8
        stmxcsr (%rsp)
        fnstcw  4(%rsp)

        movq    %rsp, (%rdi)            /* the old context is saved */
        movq    %rsi, %rsp              /* from here on: the new one's stack */

        ldmxcsr (%rsp)
        fldcw   4(%rsp)
        addq    $8, %rsp
        .cfi_adjust_cfa_offset -8
        popq    %r15
        .cfi_adjust_cfa_offset -8
        .cfi_restore %r15
        popq    %r14
        .cfi_adjust_cfa_offset -8
        .cfi_restore %r14
        popq    %r13
        .cfi_adjust_cfa_offset -8
        .cfi_restore %r13
        popq    %r12
        .cfi_adjust_cfa_offset -8
        .cfi_restore %r12
        popq    %rbx
        .cfi_adjust_cfa_offset -8
        .cfi_restore %rbx
        popq    %rbp
        .cfi_adjust_cfa_offset -8
        .cfi_restore %rbp
        popq    %r8                     /* the new context's return address */
        .cfi_adjust_cfa_offset -8
        movq    %rdx, %rax              /* returns pass in the new context */
        WS_JMP  *%r8
        .cfi_endproc
        .size   ws__fiber_swap, .-ws__fiber_swap

/* void *ws__fiber_prepare(char *top [rdi], void (*main)(void *, void *) [rsi], void *arg [rdx])
   top is 16-byte aligned; the frame's return-address slot is at top - 8,
   so that ws__fiber_entry starts with rsp = top, as after a call. */
        .globl  ws__fiber_prepare
        .hidden ws__fiber_prepare
        .type   ws__fiber_prepare, @function
        .p2align 4
ws__fiber_prepare:
        .cfi_startproc
        WS_ENDBR
        leaq    -64(%rdi), %rax
        stmxcsr (%rax)                  /* the creator's FP control state */
        fnstcw  4(%rax)
        movw    $0, 6(%rax)
        movq    $0, 8(%rax)             /* r15 */
        movq    $0, 16(%rax)            /* r14 */
        movq    %rdx, 24(%rax)          /* r13: arg */
        movq    %rsi, 32(%rax)          /* r12: main */
        movq    $0, 40(%rax)            /* rbx */
        movq    $0, 48(%rax)            /* rbp: ends the frame-pointer chain */
        leaq    ws__fiber_entry(%rip), %rcx
        movq    %rcx, 56(%rax)          /* where the first swap returns */
        ret
        .cfi_endproc
        .size   ws__fiber_prepare, .-ws__fiber_prepare

/* The first code of a made context: main(pass, arg), which never returns.
   The return address is marked undefined so that debuggers and unwinders
   stop here. */
        .type   ws__fiber_entry, @function
        .p2align 4
ws__fiber_entry:
        .cfi_startproc
        .cfi_undefined %rip
        WS_ENDBR
        movq    %rax, %rdi              /* pass: the context that switched here */
        movq    %r13, %rsi              /* arg */
        call    *%r12
        ud2                             /* main returned: impossible by contract */
        .cfi_endproc
        .size   ws__fiber_entry, .-ws__fiber_entry

        .section .note.GNU-stack,"",@progbits

#if defined(__CET__) && (__CET__ & 1)
        .section .note.gnu.property,"a"
        .p2align 3
        .long   4                       /* name size: "GNU\0" */
        .long   16                      /* descriptor size */
        .long   5                       /* NT_GNU_PROPERTY_TYPE_0 */
        .asciz  "GNU"
        .long   0xc0000002              /* GNU_PROPERTY_X86_FEATURE_1_AND */
        .long   4
        .long   1                       /* IBT only */
        .p2align 3
#endif
