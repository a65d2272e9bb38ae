using System.Text.Json;

namespace Peregrine.Tests.Architecture;

/// <summary>
/// The core library brings no S3 client into an application (docs/architecture.md, "Packages"):
/// the bucket source and the AWS SDK are the Peregrine.AspNetCore.Buckets package's. Checked on the
/// compiled assembly and on the package graph that restore wrote for this test project, which is
/// what NuGet flows to an application, with no publish.
/// </summary>
public sealed class CoreDependencyTests
{
    private static readonly string[] s_bucketOnly = ["AWSSDK", "System.IO.Hashing"];

    [Fact]
    public void CoreAssembly_ReferencesNoAwsAssembly()
    {
        var references = typeof(PeregrineOptions).Assembly.GetReferencedAssemblies().Select(static a => a.Name!).ToList();

        Assert.Contains("Microsoft.AspNetCore.Http.Abstractions", references);
        Assert.DoesNotContain(references, static name => s_bucketOnly.Any(name.StartsWith));
    }

    [Fact]
    public void BucketAssembly_ReferencesTheCoreAndTheAwsSdk()
    {
        var references = typeof(Peregrine.Sources.Bucket.BucketSource).Assembly.GetReferencedAssemblies().Select(static a => a.Name!).ToList();

        Assert.Contains("Peregrine", references);
        Assert.Contains("AWSSDK.S3", references);
    }

    [Fact]
    public void CorePackage_DependsOnNoBucketPackage_Transitively()
    {
        var packages = PackageGraph();

        var core = Closure(packages, "Peregrine.AspNetCore");
        var buckets = Closure(packages, "Peregrine.AspNetCore.Buckets");

        // Both ran: the bucket package's closure holds the SDK and the core, and the core's does not.
        Assert.Contains("AWSSDK.S3", buckets);
        Assert.Contains("Peregrine.AspNetCore", buckets);
        Assert.Equal(["Peregrine.AspNetCore"], core);
    }

    /// <summary>Each library of this run's deps.json, by name, with the names it depends on.</summary>
    private static Dictionary<string, string[]> PackageGraph()
    {
        var path = Path.Combine(AppContext.BaseDirectory, "Peregrine.Tests.deps.json");
        using var document = JsonDocument.Parse(File.ReadAllText(path));
        var target = document.RootElement.GetProperty("targets").EnumerateObject().First().Value;
        var graph = new Dictionary<string, string[]>(StringComparer.OrdinalIgnoreCase);
        foreach (var library in target.EnumerateObject())
        {
            var name = library.Name[..library.Name.IndexOf('/')];
            graph[name] = library.Value.TryGetProperty("dependencies", out var dependencies)
                ? [.. dependencies.EnumerateObject().Select(static d => d.Name)]
                : [];
        }

        return graph;
    }

    private static SortedSet<string> Closure(Dictionary<string, string[]> graph, string root)
    {
        var seen = new SortedSet<string>(StringComparer.OrdinalIgnoreCase);
        var pending = new Stack<string>([root]);
        while (pending.TryPop(out var name))
        {
            if (seen.Add(name) && graph.TryGetValue(name, out var next))
            {
                foreach (var dependency in next)
                {
                    pending.Push(dependency);
                }
            }
        }

        return seen;
    }
}
