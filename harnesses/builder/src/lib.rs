//! What the harness builder and the bench share about libpng's sources.

/// libpng's library sources (everything but the test/example programs).
pub const LIBPNG_SOURCES: &[&str] = &[
    "png.c",
    "pngerror.c",
    "pngget.c",
    "pngmem.c",
    "pngpread.c",
    "pngread.c",
    "pngrio.c",
    "pngrtran.c",
    "pngrutil.c",
    "pngset.c",
    "pngtrans.c",
    "pngwio.c",
    "pngwrite.c",
    "pngwtran.c",
    "pngwutil.c",
];
