/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * For tests/test_fiber.c, part registers: both sides of a raw
 * ws__fiber_swap in assembly, so that no compiled code stands between the
 * patterns and the checks. Every callee-saved register of AAPCS64
 * (x19-x28, x29, d8-d15) gets a pattern, the other side writes other
 * values into all of them, and the mask of what came back changed is
 * returned (bit 0 x19 ... bit 10 x29, bit 11 d8 ... bit 18 d15).
 */
        .text

        .macro SETD dreg, val
        ldr     x9, =\val
        fmov    \dreg, x9
        .endm

        .macro CHECKX reg, val, bit
        ldr     x9, =\val
        cmp     \reg, x9
        cset    x10, ne
        orr     x0, x0, x10, lsl #\bit
        .endm

        .macro CHECKD dreg, val, bit
        fmov    x11, \dreg
        CHECKX  x11, \val, \bit
        .endm

/* uint64_t ws_test_regs_swap(void **save_sp [x0], void *to_sp [x1]) */
        .globl  ws_test_regs_swap
        .type   ws_test_regs_swap, %function
        .p2align 4
ws_test_regs_swap:
        .cfi_startproc
        stp     x29, x30, [sp, #-160]!
        .cfi_def_cfa_offset 160
        .cfi_offset x29, -160
        .cfi_offset x30, -152
        stp     x19, x20, [sp, #16]
        stp     x21, x22, [sp, #32]
        stp     x23, x24, [sp, #48]
        stp     x25, x26, [sp, #64]
        stp     x27, x28, [sp, #80]
        stp     d8, d9, [sp, #96]
        stp     d10, d11, [sp, #112]
        stp     d12, d13, [sp, #128]
        stp     d14, d15, [sp, #144]
        ldr     x19, =0x1919191919191919
        ldr     x20, =0x2020202020202020
        ldr     x21, =0x2121212121212121
        ldr     x22, =0x2222222222222222
        ldr     x23, =0x2323232323232323
        ldr     x24, =0x2424242424242424
        ldr     x25, =0x2525252525252525
        ldr     x26, =0x2626262626262626
        ldr     x27, =0x2727272727272727
        ldr     x28, =0x2828282828282828
        ldr     x29, =0x2929292929292929
        SETD    d8, 0x0808080808080808
        SETD    d9, 0x0909090909090909
        SETD    d10, 0x1010101010101010
        SETD    d11, 0x1111111111111111
        SETD    d12, 0x1212121212121212
        SETD    d13, 0x1313131313131313
        SETD    d14, 0x1414141414141414
        SETD    d15, 0x1515151515151515
        mov     x2, #0
        bl      ws__fiber_swap
        mov     x0, #0
        CHECKX  x19, 0x1919191919191919, 0
        CHECKX  x20, 0x2020202020202020, 1
        CHECKX  x21, 0x2121212121212121, 2
        CHECKX  x22, 0x2222222222222222, 3
        CHECKX  x23, 0x2323232323232323, 4
        CHECKX  x24, 0x2424242424242424, 5
        CHECKX  x25, 0x2525252525252525, 6
        CHECKX  x26, 0x2626262626262626, 7
        CHECKX  x27, 0x2727272727272727, 8
        CHECKX  x28, 0x2828282828282828, 9
        CHECKX  x29, 0x2929292929292929, 10
        CHECKD  d8, 0x0808080808080808, 11
        CHECKD  d9, 0x0909090909090909, 12
        CHECKD  d10, 0x1010101010101010, 13
        CHECKD  d11, 0x1111111111111111, 14
        CHECKD  d12, 0x1212121212121212, 15
        CHECKD  d13, 0x1313131313131313, 16
        CHECKD  d14, 0x1414141414141414, 17
        CHECKD  d15, 0x1515151515151515, 18
        ldp     x19, x20, [sp, #16]
        ldp     x21, x22, [sp, #32]
        ldp     x23, x24, [sp, #48]
        ldp     x25, x26, [sp, #64]
        ldp     x27, x28, [sp, #80]
        ldp     d8, d9, [sp, #96]
        ldp     d10, d11, [sp, #112]
        ldp     d12, d13, [sp, #128]
        ldp     d14, d15, [sp, #144]
        ldp     x29, x30, [sp], #160
        .cfi_def_cfa_offset 0
        ret
        .cfi_endproc
        .ltorg
        .size   ws_test_regs_swap, .-ws_test_regs_swap

/* void ws_test_regs_body(void *pass [x0], void *sps[2] [x1]): forever,
   overwrite every callee-saved register, then swap to sps[0] saving in
   sps[1]. */
        .globl  ws_test_regs_body
        .type   ws_test_regs_body, %function
        .p2align 4
ws_test_regs_body:
        .cfi_startproc
        stp     x1, xzr, [sp, #-16]!
        .cfi_def_cfa_offset 16
1:      ldr     x19, =0xa1a1a1a1a1a1a1a1
        ldr     x20, =0xa2a2a2a2a2a2a2a2
        ldr     x21, =0xa3a3a3a3a3a3a3a3
        ldr     x22, =0xa4a4a4a4a4a4a4a4
        ldr     x23, =0xa5a5a5a5a5a5a5a5
        ldr     x24, =0xa6a6a6a6a6a6a6a6
        ldr     x25, =0xa7a7a7a7a7a7a7a7
        ldr     x26, =0xa8a8a8a8a8a8a8a8
        ldr     x27, =0xa9a9a9a9a9a9a9a9
        ldr     x28, =0xaaaaaaaaaaaaaaaa
        ldr     x29, =0xabababababababab
        SETD    d8, 0xb8b8b8b8b8b8b8b8
        SETD    d9, 0xb9b9b9b9b9b9b9b9
        SETD    d10, 0xbabababababababa
        SETD    d11, 0xbbbbbbbbbbbbbbbb
        SETD    d12, 0xbcbcbcbcbcbcbcbc
        SETD    d13, 0xbdbdbdbdbdbdbdbd
        SETD    d14, 0xbebebebebebebebe
        SETD    d15, 0xbfbfbfbfbfbfbfbf
        ldr     x3, [sp]
        add     x0, x3, #8              /* &sps[1] */
        ldr     x1, [x3]                /* sps[0] */
        mov     x2, #0
        bl      ws__fiber_swap
        b       1b
        .cfi_endproc
        .ltorg
        .size   ws_test_regs_body, .-ws_test_regs_body

        .section .note.GNU-stack,"",%progbits
