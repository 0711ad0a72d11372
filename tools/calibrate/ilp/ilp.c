/* Adds per nanosecond with one dependent chain and with eight independent chains:
 * the fastest of many batches. A dedicated Zen 4 core retires 1 dependent add a cycle
 * and up to 4 independent ones (4 integer ALUs); a core shared with a busy SMT sibling fewer. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdint.h>
#include <time.h>
static inline uint64_t now_ns(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return (uint64_t)t.tv_sec*1000000000ull+t.tv_nsec;}
static double dep(long n){uint64_t a=0;uint64_t t0=now_ns();
  for(long i=0;i<n;i++){__asm__ volatile("add $1,%0\n\tadd $1,%0\n\tadd $1,%0\n\tadd $1,%0\n\tadd $1,%0\n\tadd $1,%0\n\tadd $1,%0\n\tadd $1,%0":"+r"(a));}
  uint64_t t1=now_ns(); return (double)(8*n)/(double)(t1-t0);}
static double ind(long n){uint64_t a=0,b=0,c=0,d=0,e=0,f=0,g=0,h=0;uint64_t t0=now_ns();
  for(long i=0;i<n;i++){__asm__ volatile("add $1,%0\n\tadd $1,%1\n\tadd $1,%2\n\tadd $1,%3\n\tadd $1,%4\n\tadd $1,%5\n\tadd $1,%6\n\tadd $1,%7":"+r"(a),"+r"(b),"+r"(c),"+r"(d),"+r"(e),"+r"(f),"+r"(g),"+r"(h));}
  uint64_t t1=now_ns(); return (double)(8*n)/(double)(t1-t0);}
int main(void){double bd=0,bi=0;for(int k=0;k<2000;k++){double x=dep(125000),y=ind(125000);if(x>bd)bd=x;if(y>bi)bi=y;}
  printf("dependent adds/ns %.3f  independent adds/ns %.3f  ratio %.2f\n",bd,bi,bi/bd);return 0;}
