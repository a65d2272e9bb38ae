namespace Peregrine.Select;

internal enum ContentCoding : byte { Identity = 0, Brotli = 1, Zstd = 2, Gzip = 3 }
