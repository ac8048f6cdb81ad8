/* The exported dlsym and dlvsym. glibc's dlsym reads its caller's return
 * address: RTLD_NEXT, and the scope RTLD_DEFAULT searches, are relative to
 * the calling object. So these stubs never call the real one: they ask
 * gs_dl_plan (interpose/dlsym.c) where to go, restore the caller's
 * arguments and return address, and jump there. The real dlsym then sees
 * the program's own caller, exactly as without the shim.
 *
 *   void *gs_dl_plan(void *handle, const char *name, int versioned);
 *
 * returns the real dlsym/dlvsym, or the shim's own lookup for the nine
 * entry points on a real handle (same signature as dlsym/dlvsym). */

#if defined(__x86_64__)

/* With -fcf-protection, the IBT/SHSTK property note (the stubs begin with
 * endbr64 and return through the real function): without it the linker
 * would drop the marking for the whole library. */
#if defined(__CET__)
#include <cet.h>
#endif

	.text
	.globl	dlsym
	.type	dlsym, @function
	.p2align 4
dlsym:
	.cfi_startproc
	endbr64
	pushq	%rdi
	.cfi_adjust_cfa_offset 8
	pushq	%rsi
	.cfi_adjust_cfa_offset 8
	pushq	%rdx		/* three pushes: the call below is 16-byte aligned */
	.cfi_adjust_cfa_offset 8
	xorl	%edx, %edx
	call	gs_dl_plan
	popq	%rdx
	.cfi_adjust_cfa_offset -8
	popq	%rsi
	.cfi_adjust_cfa_offset -8
	popq	%rdi
	.cfi_adjust_cfa_offset -8
	jmp	*%rax
	.cfi_endproc
	.size	dlsym, .-dlsym

	.globl	dlvsym
	.type	dlvsym, @function
	.p2align 4
dlvsym:
	.cfi_startproc
	endbr64
	pushq	%rdi
	.cfi_adjust_cfa_offset 8
	pushq	%rsi
	.cfi_adjust_cfa_offset 8
	pushq	%rdx		/* the version */
	.cfi_adjust_cfa_offset 8
	movl	$1, %edx
	call	gs_dl_plan
	popq	%rdx
	.cfi_adjust_cfa_offset -8
	popq	%rsi
	.cfi_adjust_cfa_offset -8
	popq	%rdi
	.cfi_adjust_cfa_offset -8
	jmp	*%rax
	.cfi_endproc
	.size	dlvsym, .-dlvsym

#elif defined(__aarch64__)

	.text
	.globl	dlsym
	.type	dlsym, %function
	.p2align 4
dlsym:
	.cfi_startproc
	hint	34		/* bti c */
	stp	x29, x30, [sp, #-32]!
	.cfi_def_cfa_offset 32
	.cfi_offset 29, -32
	.cfi_offset 30, -24
	mov	x29, sp
	stp	x0, x1, [sp, #16]
	mov	w2, #0
	bl	gs_dl_plan
	mov	x16, x0
	ldp	x0, x1, [sp, #16]
	ldp	x29, x30, [sp], #32
	.cfi_def_cfa_offset 0
	.cfi_restore 29
	.cfi_restore 30
	br	x16
	.cfi_endproc
	.size	dlsym, .-dlsym

	.globl	dlvsym
	.type	dlvsym, %function
	.p2align 4
dlvsym:
	.cfi_startproc
	hint	34		/* bti c */
	stp	x29, x30, [sp, #-48]!
	.cfi_def_cfa_offset 48
	.cfi_offset 29, -48
	.cfi_offset 30, -40
	mov	x29, sp
	stp	x0, x1, [sp, #16]
	str	x2, [sp, #32]	/* the version */
	mov	w2, #1
	bl	gs_dl_plan
	mov	x16, x0
	ldp	x0, x1, [sp, #16]
	ldr	x2, [sp, #32]
	ldp	x29, x30, [sp], #48
	.cfi_def_cfa_offset 0
	.cfi_restore 29
	.cfi_restore 30
	br	x16
	.cfi_endproc
	.size	dlvsym, .-dlvsym

/* With -mbranch-protection, the BTI property note (the stubs begin with
 * bti c): without it the linker would drop the marking for the whole
 * library. */
#if defined(__ARM_FEATURE_BTI_DEFAULT)
	.pushsection .note.gnu.property, "a"
	.balign	8
	.long	4		/* name size */
	.long	16		/* descriptor size */
	.long	5		/* NT_GNU_PROPERTY_TYPE_0 */
	.asciz	"GNU"
	.long	0xc0000000	/* GNU_PROPERTY_AARCH64_FEATURE_1_AND */
	.long	4
	.long	1		/* BTI */
	.long	0
	.popsection
#endif

#endif

	.section .note.GNU-stack, "", %progbits
