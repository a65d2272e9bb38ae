using System.Diagnostics;
using System.Net;
using System.Net.Http.Headers;
using Peregrine.Tests.Infrastructure;
using Peregrine.Tests.Server.Hosting;
using Xunit.Abstractions;

namespace Peregrine.Tests.Sources.Bucket;

/// <summary>
/// Three servers (the executable, as deployed) reading one bucket behind haproxy: every file of a
/// 7,000-file site answered with the uploaded bytes and one ETag and Last-Modified whichever replica answers, 304
/// across replicas, and a new release taken up by all of them. Each phase's time is written to
/// the test's output.
/// </summary>
[Collection(CephCollection.Name)]
public sealed class BucketReplicaTests(CephRgw rgw, ITestOutputHelper output)
{
    private const int Files = 7000;
    // Well above a quiet machine's time for three first copies of the site: it bounds a hang only.
    private static readonly TimeSpan s_bound = TimeSpan.FromSeconds(300);

    [CephFact]
    public async Task ThreeReplicasBehindHaproxy_SameBytesETagsAnd304s()
    {
        var haproxyPath = new[] { "/usr/sbin/haproxy", "/usr/bin/haproxy", "/usr/local/sbin/haproxy" }.FirstOrDefault(File.Exists);
        Assert.True(haproxyPath is not null || !CephRgw.Required, "haproxy is not installed; .ci/run installs it");
        if (haproxyPath is null)
        {
            return;
        }

        var bucket = await rgw.NewBucketAsync();
        var site = Site("r1");
        var uploading = Stopwatch.StartNew();
        await UploadAsync(bucket, "r1", site);
        output.WriteLine($"uploaded {site.Count} files in {uploading.ElapsedMilliseconds} ms");
        await rgw.PutAsync(bucket, "site/current", "r1");

        var environment = new Dictionary<string, string>
        {
            ["AWS_ACCESS_KEY_ID"] = CephRgw.AccessKey,
            ["AWS_SECRET_ACCESS_KEY"] = CephRgw.SecretKey,
            ["AWS_ENDPOINT_URL_S3"] = rgw.Endpoint.ToString(),
        };
        var replicas = Enumerable.Range(0, 3).Select(_ => ServerProcess.Start(environment,
            $"s3://{bucket}/site", "--bucket-pointer", "current", "--bucket-path-style", "--bucket-poll", "1", "-p", "0")).ToList();
        using var folder = new TempTree();
        Process? haproxy = null;
        try
        {
            var addresses = new List<Uri>();
            foreach (var replica in replicas)
            {
                addresses.Add(await replica.AddressAsync());
            }

            using var direct = new HttpClient();
            await BucketHost.EventuallyAsync(async () =>
            {
                foreach (var address in addresses)
                {
                    using var health = await direct.GetAsync(new Uri(address, "/healthz"));
                    if (health.StatusCode != HttpStatusCode.OK)
                    {
                        return false;
                    }
                }

                return true;
            }, s_bound, "every replica ready");
            output.WriteLine($"every replica ready after {uploading.ElapsedMilliseconds} ms from the upload's start");

            var port = CephRgw.FreePort();
            var config = folder.Write("haproxy.cfg", $"""
                global
                  maxconn 1000
                defaults
                  mode http
                  timeout connect 5s
                  timeout client 30s
                  timeout server 30s
                frontend site
                  bind 127.0.0.1:{port}
                  default_backend replicas
                backend replicas
                  balance roundrobin
                  option httpchk GET /healthz
                  http-response set-header X-Replica %[srv_name]
                {string.Join("\n", addresses.Select((a, i) => $"  server r{i} 127.0.0.1:{a.Port} check inter 500ms"))}

                """);
            haproxy = Process.Start(new ProcessStartInfo(haproxyPath!, ["-f", config, "-db"]) { RedirectStandardError = true, RedirectStandardOutput = true, UseShellExecute = false })!;
            using var client = new HttpClient { BaseAddress = new Uri($"http://127.0.0.1:{port}") };
            await BucketHost.EventuallyAsync(async () =>
            {
                try
                {
                    return (await client.GetAsync("/healthz")).StatusCode == HttpStatusCode.OK;
                }
                catch (HttpRequestException)
                {
                    return false;
                }
            }, s_bound, "haproxy answering");

            var phase = Stopwatch.StartNew();
            await CheckAsync(client, site);
            output.WriteLine($"checked r1 through haproxy in {phase.ElapsedMilliseconds} ms");

            // A release with index.html and every seventh file changed, named by the pointer: every
            // replica takes it whole, the changed files downloaded and the others linked locally.
            var next = Next(site, "r2");
            phase.Restart();
            await UploadAsync(bucket, "r2", next);
            output.WriteLine($"uploaded r2 in {phase.ElapsedMilliseconds} ms");
            phase.Restart();
            await rgw.PutAsync(bucket, "site/current", "r2");
            await BucketHost.EventuallyAsync(async () =>
            {
                foreach (var address in addresses)
                {
                    if (await direct.GetStringAsync(new Uri(address, "/index.html")) != "index r2")
                    {
                        return false;
                    }
                }

                return true;
            }, s_bound, "every replica on r2");
            output.WriteLine($"every replica on r2 after {phase.ElapsedMilliseconds} ms");
            phase.Restart();
            await CheckAsync(client, next);
            output.WriteLine($"checked r2 through haproxy in {phase.ElapsedMilliseconds} ms");
        }
        catch (Exception ex)
        {
            throw new InvalidOperationException(ex.Message + "\nReplica output:\n" + string.Join("\n---\n", replicas.Select(r => r.Output + "\n" + r.Errors)), ex);
        }
        finally
        {
            foreach (var replica in replicas)
            {
                output.WriteLine(replica.Output + "\n" + replica.Errors);
            }

            if (haproxy is not null)
            {
                haproxy.Kill();
                await haproxy.WaitForExitAsync();
                haproxy.Dispose();
            }

            foreach (var replica in replicas)
            {
                replica.Dispose();
            }
        }
    }

    /// <summary>Each file fetched through haproxy until three replicas answered it: the uploaded bytes, one ETag and one Last-Modified, then 304 on the tag from each.</summary>
    private static async Task CheckAsync(HttpClient client, Dictionary<string, byte[]> site)
    {
        var replicasSeen = new HashSet<string>();
        await Parallel.ForEachAsync(site, new ParallelOptions { MaxDegreeOfParallelism = 16 }, async (file, token) =>
        {
            var tags = new HashSet<string>();
            var times = new HashSet<string>();
            for (var i = 0; i < 3; i++)
            {
                using var response = await client.GetAsync("/" + file.Key, token);
                Assert.Equal(HttpStatusCode.OK, response.StatusCode);
                Assert.Equal(file.Value, await response.Content.ReadAsByteArrayAsync(token));
                tags.Add(response.Headers.ETag!.Tag);
                times.Add(response.Content.Headers.GetValues("Last-Modified").Single());
                lock (replicasSeen)
                {
                    replicasSeen.Add(response.Headers.GetValues("X-Replica").Single());
                }
            }

            var tag = Assert.Single(tags);
            Assert.Single(times);
            for (var i = 0; i < 3; i++)
            {
                using var request = new HttpRequestMessage(HttpMethod.Get, "/" + file.Key);
                request.Headers.IfNoneMatch.Add(new EntityTagHeaderValue(tag));
                using var response = await client.SendAsync(request, token);
                Assert.Equal(HttpStatusCode.NotModified, response.StatusCode);
            }
        });
        Assert.Equal(3, replicasSeen.Count);
    }

    /// <summary>A site of <see cref="Files"/> files, a few large enough to be sent from disk.</summary>
    private static Dictionary<string, byte[]> Site(string release)
    {
        var site = new Dictionary<string, byte[]>(StringComparer.Ordinal) { ["index.html"] = System.Text.Encoding.UTF8.GetBytes("index " + release) };
        var random = new Random(release.GetHashCode(StringComparison.Ordinal));
        for (var i = 1; i < Files; i++)
        {
            var size = i % 500 == 0 ? 1_500_000 + i : random.Next(10, 4000);
            var bytes = new byte[size];
            random.NextBytes(bytes);
            System.Text.Encoding.ASCII.GetBytes(release).CopyTo(bytes, 0);
            site[$"d{i % 37}/f{i}.{(i % 3 == 0 ? "css" : i % 3 == 1 ? "js" : "bin")}"] = bytes;
        }

        return site;
    }

    /// <summary><paramref name="site"/> with index.html and every seventh file changed; the others the same bytes.</summary>
    private static Dictionary<string, byte[]> Next(Dictionary<string, byte[]> site, string release)
    {
        var next = new Dictionary<string, byte[]>(site, StringComparer.Ordinal) { ["index.html"] = System.Text.Encoding.UTF8.GetBytes("index " + release) };
        var random = new Random(release.GetHashCode(StringComparison.Ordinal));
        foreach (var path in site.Keys.Where((_, i) => i % 7 == 3))
        {
            var bytes = new byte[random.Next(10, 4000)];
            random.NextBytes(bytes);
            System.Text.Encoding.ASCII.GetBytes(release).CopyTo(bytes, 0);
            next[path] = bytes;
        }

        return next;
    }

    private async Task UploadAsync(string bucket, string release, Dictionary<string, byte[]> site)
        => await Parallel.ForEachAsync(site, new ParallelOptions { MaxDegreeOfParallelism = 32 }, async (file, _) =>
            await rgw.PutAsync(bucket, $"site/releases/{release}/{file.Key}", file.Value));
}
