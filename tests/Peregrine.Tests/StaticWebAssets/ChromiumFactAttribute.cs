using Peregrine.Tests.Sources.Bucket;

namespace Peregrine.Tests.StaticWebAssets;

/// <summary>
/// A test that needs <see cref="HeadlessChromium"/> (and, with <see cref="AndCeph"/>, Ceph RGW):
/// skipped, saying why, where either is not installed, unless CI=true, where it fails instead.
/// With <see cref="AndZstd"/> it needs zstd too, and skips where the run has none (the portable
/// parts) whatever CI says, as every zstd test does.
/// </summary>
public sealed class ChromiumFactAttribute : FactAttribute
{
    private bool _andCeph;
    private bool _andZstd;

    public ChromiumFactAttribute()
    {
        Decide();
    }

    /// <summary>The test needs Ceph RGW too.</summary>
    public bool AndCeph
    {
        get => _andCeph;
        set
        {
            _andCeph = value;
            Decide();
        }
    }

    /// <summary>
    /// The test needs zstd too (a dictionary delta is a zstd frame): skipped, with the reason,
    /// where there is none (the portable parts), as <see cref="Platform.ZstdFactAttribute"/>.
    /// </summary>
    public bool AndZstd
    {
        get => _andZstd;
        set
        {
            _andZstd = value;
            Decide();
        }
    }

    private void Decide()
    {
        if (HeadlessChromium.Executable is null && !HeadlessChromium.Required)
        {
            Skip = "Chromium is not installed here (apt-get install --no-install-recommends chromium; .ci/run installs it).";
        }
        else if (_andCeph && !CephRgw.Installed && !CephRgw.Required)
        {
            Skip = "Ceph RGW is not installed here (apt-get install ceph-mon ceph-osd radosgw; .ci/run installs it).";
        }
        else if (_andZstd)
        {
            Skip = Platform.ZstdFactAttribute.NoZstd;
        }
    }
}
