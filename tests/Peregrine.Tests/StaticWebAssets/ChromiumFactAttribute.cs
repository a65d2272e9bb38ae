using Peregrine.Tests.Sources.Bucket;

namespace Peregrine.Tests.StaticWebAssets;

/// <summary>
/// A test that needs <see cref="HeadlessChromium"/> (and, with <see cref="AndCeph"/>, Ceph RGW):
/// skipped, saying why, where either is not installed, unless CI=true, where it fails instead.
/// </summary>
public sealed class ChromiumFactAttribute : FactAttribute
{
    private bool _andCeph;

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
    }
}
