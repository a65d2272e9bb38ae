using Peregrine.Tests.Architecture.CycleSample.Left;

namespace Peregrine.Tests.Architecture;

/// <summary>
/// Dependencies between namespaces point one way (docs/architecture.md, "Folders"): a change
/// that makes two namespaces use each other, however indirectly and however hidden (a fully
/// qualified name, a lambda, a generic argument), fails here with the cycle and the uses that
/// make it.
/// </summary>
public sealed class NamespaceCycleTests
{
    // Cycles allowed, per assembly: none. Each entry would be a set of namespaces that may reach
    // each other; any other cycle, or a larger set, fails.
    private static readonly Dictionary<string, string[][]> s_known = new()
    {
        ["Peregrine"] = [],
        ["Peregrine.Server"] = [],
    };

    public static TheoryData<string> Assemblies() => new()
    {
        typeof(PeregrineOptions).Assembly.Location,
        typeof(Peregrine.Server.Hosting.ServerHost).Assembly.Location,
    };

    [Theory]
    [MemberData(nameof(Assemblies))]
    public void Assembly_Namespaces_FormNoCycle(string path)
    {
        var graph = NamespaceGraph.Read(path);
        var known = s_known[Path.GetFileNameWithoutExtension(path)];

        var cycles = graph.Cycles()
            .Where(cycle => !known.Any(set => graph.CycleSet(cycle[0]).IsSubsetOf(set)))
            .ToList();

        Assert.True(graph.Edges.Count > 1, "the reader found no dependencies at all in " + path);
        Assert.True(cycles.Count == 0, $"namespace cycles in {Path.GetFileName(path)}:{Environment.NewLine}"
            + string.Join(Environment.NewLine, cycles.Select(graph.Describe)));
    }

    [Fact]
    public void Detector_CycleThroughMethodBodyAndLambda_IsFound()
    {
        // CycleSample.Left uses Right through a field; Right uses Left only inside a lambda's
        // body, which the compiler moves to a nested closure class.
        var graph = NamespaceGraph.Read(typeof(LeftHolder).Assembly.Location);

        var cycles = graph.Cycles().Where(cycle => cycle[0].StartsWith("Peregrine.Tests.Architecture.CycleSample", StringComparison.Ordinal)).ToList();

        var cycle = Assert.Single(cycles);
        Assert.Equal(["Peregrine.Tests.Architecture.CycleSample.Left", "Peregrine.Tests.Architecture.CycleSample.Right", "Peregrine.Tests.Architecture.CycleSample.Left"], cycle);
        Assert.Contains("uses Peregrine.Tests.Architecture.CycleSample.Left.LeftHolder", graph.Describe(cycle));
    }

    [Theory]
    [InlineData("Peregrine.Tests.Architecture.CycleSample.Generic", "Peregrine.Tests.Architecture.CycleSample.Left")]    // a generic argument in a local's type
    [InlineData("Peregrine.Tests.Architecture.CycleSample.Cast", "Peregrine.Tests.Architecture.CycleSample.Left")]       // isinst only
    [InlineData("Peregrine.Tests.Architecture.CycleSample.Static", "Peregrine.Tests.Architecture.CycleSample.Left")]     // a static field read
    public void Detector_UseInsideBody_IsAnEdge(string from, string to)
    {
        var graph = NamespaceGraph.Read(typeof(LeftHolder).Assembly.Location);

        Assert.True(graph.Edges.TryGetValue(from, out var targets) && targets.ContainsKey(to), $"no edge {from} → {to}");
    }

    [Fact]
    public void Detector_Chain_IsNoCycle()
    {
        var graph = new NamespaceGraph();
        graph.Add("A", "B", "a uses b");
        graph.Add("B", "C", "b uses c");
        graph.Add("A", "C", "a uses c");

        Assert.Empty(graph.Cycles());
    }

    [Fact]
    public void Detector_LongCycle_IsPrintedInOrder()
    {
        var graph = new NamespaceGraph();
        graph.Add("Peregrine.Compression", "Peregrine.Diagnostics", "Compressor uses CompressionTotals");
        graph.Add("Peregrine.Diagnostics", "Peregrine.Instances", "HealthEndpoint uses PeregrineInstances");
        graph.Add("Peregrine.Instances", "Peregrine.Compression", "PeregrineInstances uses Compressor");
        graph.Add("Peregrine.Instances", "Peregrine.Live", "PeregrineInstances uses FileCatalog");

        var cycle = Assert.Single(graph.Cycles());

        Assert.Equal("Peregrine.Compression → Peregrine.Diagnostics → Peregrine.Instances → Peregrine.Compression", graph.Describe(cycle).Split(Environment.NewLine)[0]);
    }
}
