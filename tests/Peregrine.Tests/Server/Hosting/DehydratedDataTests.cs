using Peregrine.Server.Hosting;

namespace Peregrine.Tests.Server.Hosting;

/// <summary>
/// In a JIT process the executable is the dotnet host, which has no ReadyToRun module: nothing
/// is found and nothing is dropped. The Native AOT executable's case is tests/aot-smoke/run's,
/// which reads the server's page map (tests/aot-smoke/dehydrated.py).
/// </summary>
public sealed class DehydratedDataTests
{
    [Fact]
    public void Release_InAJitProcess_DropsNothing()
    {
        Assert.Equal(0, DehydratedData.Release());
        Assert.Equal(0, DehydratedData.Release());
    }
}
