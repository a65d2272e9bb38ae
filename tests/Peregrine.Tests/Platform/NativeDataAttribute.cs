using System.Reflection;
using Xunit.Sdk;

namespace Peregrine.Tests.Platform;

/// <summary>
/// An <see cref="InlineDataAttribute"/> row of a behaviour only the native parts have: skipped,
/// saying why, on the portable parts, so the theory's other rows still run (see <see cref="NativeFactAttribute"/>).
/// </summary>
public sealed class NativeDataAttribute(string needs, params object?[] data) : DataAttribute
{
    public override string? Skip
    {
        get => NativeSkip.Reason(needs) ?? base.Skip;
        set => base.Skip = value;
    }

    public override IEnumerable<object?[]> GetData(MethodInfo testMethod) => [data];
}
