using Peregrine.Interop;

namespace Peregrine.Tests.Platform;

/// <summary>
/// A test of a behaviour that only the native parts have (<see cref="PlatformParts"/>): skipped,
/// saying why, where the portable parts are in use (not Linux, or <c>PEREGRINE_PORTABLE=1</c>).
/// Only for what the portable path cannot do at all, never for what it does wrongly.
/// </summary>
public sealed class NativeFactAttribute : FactAttribute
{
    /// <param name="needs">What the test needs that the portable parts lack, e.g. "inotify close events".</param>
    public NativeFactAttribute(string needs) => Skip = NativeSkip.Reason(needs);
}

/// <summary>The <see cref="TheoryAttribute"/> of <see cref="NativeFactAttribute"/>.</summary>
public sealed class NativeTheoryAttribute : TheoryAttribute
{
    /// <param name="needs">What the test needs that the portable parts lack.</param>
    public NativeTheoryAttribute(string needs) => Skip = NativeSkip.Reason(needs);
}

/// <summary>A test that needs Linux itself, whatever parts this run uses (it starts a process with the switch set its own way).</summary>
public sealed class LinuxFactAttribute : FactAttribute
{
    public LinuxFactAttribute()
    {
        if (!OperatingSystem.IsLinux())
        {
            Skip = "Needs Linux, whose calls the native parts make.";
        }
    }
}

internal static class NativeSkip
{
    public static string? Reason(string needs)
        => PlatformParts.IsNative ? null : $"Needs {needs}, which only the native parts have; this run uses the portable parts{(PlatformParts.PortableForced ? " (" + PlatformParts.PortableVariable + "=1)" : "")}.";
}
