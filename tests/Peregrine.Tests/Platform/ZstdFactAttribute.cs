using Peregrine.Compression;

namespace Peregrine.Tests.Platform;

/// <summary>
/// A test that needs zstd (a dictionary delta is a zstd frame): skipped, with the reason, where
/// there is none (the portable parts, or no <c>libzstd.so.1</c>). On the build machine
/// <c>CompressorTests.Libzstd_IsAvailableOnTheBuildMachine</c> keeps such a test from being
/// skipped unnoticed.
/// </summary>
public sealed class ZstdFactAttribute : FactAttribute
{
    public ZstdFactAttribute()
    {
        Skip = NoZstd;
    }

    /// <summary>Why a test that needs zstd is skipped in this run, or <see langword="null"/> where zstd is here.</summary>
    internal static string? NoZstd => Zstd.IsAvailable ? null : "Needs zstd, which this run does not have: " + Zstd.UnavailableReason;
}

/// <summary>The <see cref="TheoryAttribute"/> of <see cref="ZstdFactAttribute"/>.</summary>
public sealed class ZstdTheoryAttribute : TheoryAttribute
{
    public ZstdTheoryAttribute()
    {
        Skip = ZstdFactAttribute.NoZstd;
    }
}
