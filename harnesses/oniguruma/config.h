// Oniguruma 6.1 and 6.9 without their configure step: what configure finds on Linux x86-64
// (glibc). 6.1 reads only some of it.
#define HAVE_ALLOCA 1
#define HAVE_ALLOCA_H 1
#define HAVE_PROTOTYPES 1
#define HAVE_STDARG_PROTOTYPES 1
#define HAVE_STDINT_H 1
#define HAVE_STDLIB_H 1
#define HAVE_STRINGS_H 1
#define HAVE_STRING_H 1
#define HAVE_SYS_TIMES_H 1
#define HAVE_SYS_TIME_H 1
#define HAVE_SYS_TYPES_H 1
#define HAVE_UNISTD_H 1
#define SIZEOF_INT 4
#define SIZEOF_LONG 8
#define SIZEOF_SHORT 2
#define STDC_HEADERS 1
#define HAVE_INTTYPES_H 1
#define SIZEOF_LONG_LONG 8
#define SIZEOF_VOIDP 8
