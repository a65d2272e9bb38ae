using System.Reflection;
using Peregrine.Compression;
using Xunit.Sdk;

namespace Peregrine.Tests.Platform;

/// <summary>
/// An <see cref="InlineDataAttribute"/> row that needs zstd: skipped, with the reason, where there
/// is none (the portable parts, or no <c>libzstd.so.1</c>), so a theory's other codings still run.
/// On the build machine <c>CompressorTests.Libzstd_IsAvailableOnTheBuildMachine</c> keeps such a
/// row from being skipped unnoticed.
/// </summary>
public sealed class ZstdDataAttribute(params object?[] data) : DataAttribute
{
    public override string? Skip
    {
        get => Zstd.IsAvailable ? base.Skip : "Needs zstd, which this run does not have: " + Zstd.UnavailableReason;
        set => base.Skip = value;
    }

    public override IEnumerable<object?[]> GetData(MethodInfo testMethod) => [data];
}
