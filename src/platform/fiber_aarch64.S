/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * The context switch for aarch64, AAPCS64 (src/platform/fiber.h).
 *
 * Saved on the stack of the context being left, 176 bytes from the saved
 * stack pointer up (16-byte aligned, as sp must stay):
 *     0  x19 x20        64  x27 x28       128  d12 d13
 *    16  x21 x22        80  x29 x30       144  d14 d15
 *    32  x23 x24        96  d8  d9        160  FPCR, 8 bytes unused
 *    48  x25 x26       112  d10 d11
 * and sp itself in *save_sp. That is every register AAPCS64 makes
 * callee-saved: x19-x28, the frame pointer x29, the link register x30
 * (where ret goes), sp, the low 64 bits of v8-v15 (d8-d15; their upper
 * halves are caller-saved), and FPCR (rounding, flush-to-zero, default
 * NaN: a function must preserve it unless documented otherwise). FPCR is
 * written only when it differs, as writing it may be slow on some cores.
 * Everything else (x0-x18, v0-v7, v16-v31, FPSR, NZCV) is caller-saved:
 * the compiler has kept what it needs before calling us.
 *
 * A context that has not run yet is a frame ws__fiber_prepare writes in
 * the same layout: x19 = main, x20 = arg, x29 = 0, x30 = ws__fiber_entry,
 * the creator's FPCR, zeros elsewhere; ws__fiber_swap's ret lands there
 * with `pass` in x0.
 *
 * BTI: `bti c` at the two functions called from C (a no-op hint before
 * ARMv8.5); ws__fiber_entry is reached by ret, which BTI does not check,
 * and its call of main is a blr to a C function, which the compiler marks.
 * The return addresses we save are the callers' as they were (pointer
 * authentication signs and checks them in the callers, against the same
 * sp), so PAC needs nothing here. The objects say BTI/PAC when the
 * compiler targets them.
 */
#if defined(__ARM_FEATURE_BTI_DEFAULT) && __ARM_FEATURE_BTI_DEFAULT
#define WS_BTI_C hint #34
#define WS_PROP_BTI 1
#else
#define WS_BTI_C
#define WS_PROP_BTI 0
#endif
#if defined(__ARM_FEATURE_PAC_DEFAULT) && __ARM_FEATURE_PAC_DEFAULT
#define WS_PROP_PAC 2
#else
#define WS_PROP_PAC 0
#endif

        .text

/* void *ws__fiber_swap(void **save_sp [x0], void *to_sp [x1], void *pass [x2]) */
        .globl  ws__fiber_swap
        .hidden ws__fiber_swap
        .type   ws__fiber_swap, %function
        .p2align 4
ws__fiber_swap:
        .cfi_startproc
        WS_BTI_C
        sub     sp, sp, #176
        .cfi_def_cfa_offset 176
        stp     x19, x20, [sp, #0]
        stp     x21, x22, [sp, #16]
        stp     x23, x24, [sp, #32]
        stp     x25, x26, [sp, #48]
        stp     x27, x28, [sp, #64]
        stp     x29, x30, [sp, #80]
        .cfi_offset x29, -96
        .cfi_offset x30, -88
        stp     d8, d9, [sp, #96]
        stp     d10, d11, [sp, #112]
        stp     d12, d13, [sp, #128]
        stp     d14, d15, [sp, #144]
        mrs     x9, fpcr
        str     x9, [sp, #160]

        mov     x10, sp
        str     x10, [x0]               /* the old context is saved */
        mov     sp, x1                  /* from here on: the new one's stack */

        ldp     x19, x20, [sp, #0]
        ldp     x21, x22, [sp, #16]
        ldp     x23, x24, [sp, #32]
        ldp     x25, x26, [sp, #48]
        ldp     x27, x28, [sp, #64]
        ldp     x29, x30, [sp, #80]
        ldp     d8, d9, [sp, #96]
        ldp     d10, d11, [sp, #112]
        ldp     d12, d13, [sp, #128]
        ldp     d14, d15, [sp, #144]
        ldr     x9, [sp, #160]
        mrs     x10, fpcr
        cmp     x9, x10
        b.eq    1f
        msr     fpcr, x9
1:      add     sp, sp, #176
        .cfi_def_cfa_offset 0
        .cfi_restore x29
        .cfi_restore x30
        mov     x0, x2                  /* returns pass in the new context */
        ret
        .cfi_endproc
        .size   ws__fiber_swap, .-ws__fiber_swap

/* void *ws__fiber_prepare(char *top [x0], void (*main)(void *, void *) [x1], void *arg [x2])
   top is 16-byte aligned; ws__fiber_entry starts with sp = top. */
        .globl  ws__fiber_prepare
        .hidden ws__fiber_prepare
        .type   ws__fiber_prepare, %function
        .p2align 4
ws__fiber_prepare:
        .cfi_startproc
        WS_BTI_C
        sub     x0, x0, #176
        stp     x1, x2, [x0, #0]        /* x19: main, x20: arg */
        stp     xzr, xzr, [x0, #16]
        stp     xzr, xzr, [x0, #32]
        stp     xzr, xzr, [x0, #48]
        stp     xzr, xzr, [x0, #64]
        adr     x9, ws__fiber_entry
        stp     xzr, x9, [x0, #80]      /* x29: 0 ends the frame chain; x30: the entry */
        stp     xzr, xzr, [x0, #96]
        stp     xzr, xzr, [x0, #112]
        stp     xzr, xzr, [x0, #128]
        stp     xzr, xzr, [x0, #144]
        mrs     x9, fpcr                /* the creator's FP control state */
        stp     x9, xzr, [x0, #160]
        ret
        .cfi_endproc
        .size   ws__fiber_prepare, .-ws__fiber_prepare

/* The first code of a made context: main(pass, arg), which never returns.
   The return address is marked undefined so that debuggers and unwinders
   stop here. */
        .type   ws__fiber_entry, %function
        .p2align 4
ws__fiber_entry:
        .cfi_startproc
        .cfi_undefined x30
        mov     x1, x20                 /* arg; x0 already holds pass */
        blr     x19
        brk     #0                      /* main returned: impossible by contract */
        .cfi_endproc
        .size   ws__fiber_entry, .-ws__fiber_entry

        .section .note.GNU-stack,"",%progbits

#if WS_PROP_BTI || WS_PROP_PAC
        .section .note.gnu.property,"a"
        .p2align 3
        .long   4                       /* name size: "GNU\0" */
        .long   16                      /* descriptor size */
        .long   5                       /* NT_GNU_PROPERTY_TYPE_0 */
        .asciz  "GNU"
        .long   0xc0000000              /* GNU_PROPERTY_AARCH64_FEATURE_1_AND */
        .long   4
        .long   WS_PROP_BTI | WS_PROP_PAC
        .long   0
#endif
