push   %rbp
mov    %rsp,%rbp
push   %r15
push   %r14
push   %r13
push   %rbx
test   %rdi,%rdi
je     
test   %rdx,%rdx
jle    
lea    (%rcx),%rax
lea    (%rcx),%rsi
xor    %r9d,%r9d
xorps  %xmm0,%xmm0
xchg   %ax,%ax
mov    %r9,%r14
shl    $,%r14
lea    (%rcx,%r14,1),%r10
mov    %rdx,%r15
sub    %r9,%r15
mov    $,%r11d
cmp    $,%r15
jg     
cmp    $,%r15
jle    
mov    %r15,%r11
movaps (%r8),%xmm1
movaps (%r8),%xmm2
movaps (%r8),%xmm3
movaps (%r8),%xmm4
movaps (%r8),%xmm5
movaps (%r8),%xmm6
lea    (%rax,%r14,1),%r15
add    %rsi,%r14
xor    %ebx,%ebx
mov    %rbx,%r13
prefetcht0 (%r14)
movaps -(%r15),%xmm8
movaps -(%r15),%xmm9
movaps -(%r15),%xmm10
movaps (%r15),%xmm11
movaps %xmm8,%xmm7
unpcklps %xmm9,%xmm7
movaps %xmm11,%xmm12
movlhps %xmm10,%xmm12
shufps $,%xmm12,%xmm7
movaps %xmm9,%xmm12
shufps $,%xmm8,%xmm12
movaps %xmm11,%xmm13
shufps $,%xmm10,%xmm13
shufps $,%xmm13,%xmm12
unpckhps %xmm9,%xmm8
unpckhpd %xmm10,%xmm11
shufps $,%xmm11,%xmm8
movaps %xmm12,%xmm9
maxps  %xmm7,%xmm9
movaps %xmm8,%xmm10
maxps  %xmm9,%xmm10
movaps %xmm5,%xmm9
mulps  %xmm12,%xmm9
minps  %xmm7,%xmm12
movaps %xmm6,%xmm11
mulps  %xmm8,%xmm11
minps  %xmm12,%xmm8
subps  %xmm8,%xmm10
movaps %xmm3,%xmm8
maxps  %xmm10,%xmm8
movaps %xmm2,%xmm10
minps  %xmm8,%xmm10
movaps %xmm2,%xmm8
subps  %xmm10,%xmm8
mulps  %xmm1,%xmm8
addps  %xmm2,%xmm8
movups %xmm8,(%rdi,%rbx,4)
mulps  %xmm4,%xmm7
addps  %xmm9,%xmm7
addps  %xmm11,%xmm7
movups %xmm7,(%rdi,%rbx,4)
add    $,%rbx
add    $,%r15
add    $,%r14
add    $,%r13
cmp    %r13,%r11
jae    
cmp    %r11,%rbx
jb     
jmp    
nopl   (%rax,%rax,1)
test   %r15,%r15
jle    
xor    %ebx,%ebx
mov    %r15,%r11
mov    %rbx,%r14
or     $,%r14
xorps  %xmm1,%xmm1
xorps  %xmm2,%xmm2
cmp    %r11,%r14
jae    
shl    $,%r14
movaps (%r10,%r14,1),%xmm2
mov    %rbx,%r14
or     $,%r14
cmp    %r11,%r14
jae    
shl    $,%r14
movaps (%r10,%r14,1),%xmm1
mov    %rbx,%r14
shl    $,%r14
movaps (%r10,%r14,1),%xmm3
movaps %xmm2,%xmm6
movlhps %xmm3,%xmm6
movq   %xmm1,%xmm5
shufps $,%xmm5,%xmm6
movaps %xmm2,%xmm7
shufps $,%xmm3,%xmm7
movaps %xmm1,%xmm4
shufps $,%xmm0,%xmm4
shufps $,%xmm4,%xmm7
movaps %xmm2,%xmm8
unpckhpd %xmm3,%xmm8
unpckhpd %xmm0,%xmm1
shufps $,%xmm1,%xmm8
movaps %xmm7,%xmm9
maxps  %xmm6,%xmm9
movaps %xmm8,%xmm10
maxps  %xmm9,%xmm10
minps  %xmm6,%xmm7
minps  %xmm7,%xmm8
subps  %xmm8,%xmm10
movaps (%r8),%xmm6
movaps (%r8),%xmm7
maxps  %xmm10,%xmm7
movaps %xmm6,%xmm8
minps  %xmm7,%xmm8
movaps %xmm6,%xmm7
subps  %xmm8,%xmm7
mulps  (%r8),%xmm7
addps  %xmm6,%xmm7
movups %xmm7,(%rdi,%rbx,4)
movaps %xmm3,%xmm6
unpcklps %xmm2,%xmm6
shufps $,%xmm5,%xmm6
mulps  (%r8),%xmm6
movaps %xmm2,%xmm5
shufps $,%xmm3,%xmm5
shufps $,%xmm4,%xmm5
mulps  (%r8),%xmm5
addps  %xmm6,%xmm5
unpckhps %xmm2,%xmm3
shufps $,%xmm1,%xmm3
mulps  (%r8),%xmm3
addps  %xmm5,%xmm3
movups %xmm3,(%rdi,%rbx,4)
xor    %ebx,%ebx
nopw   (%rax,%rax,1)
movss  (%rdi,%rbx,4),%xmm1
movss  (%rdi,%rbx,4),%xmm2
inc    %rbx
mov    (%r10),%r14d
movaps (%r10),%xmm3
shufps $,%xmm2,%xmm2
subps  %xmm2,%xmm3
shufps $,%xmm1,%xmm1
mulps  %xmm3,%xmm1
addps  %xmm2,%xmm1
movaps %xmm1,(%r10)
mov    %r14d,(%r10)
add    $,%r10
cmp    %rbx,%r11
jne    
add    %r11,%r9
cmp    %rdx,%r9
jl     
jmp    
js     
xor    %r11d,%r11d
jmp    
pop    %rbx
pop    %r13
pop    %r14
pop    %r15
pop    %rbp
ret
ud2
ud2
nopl   (%rax)
