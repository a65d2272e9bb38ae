using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.DependencyInjection;
using Peregrine.Compression;
using Peregrine.Http1;

namespace Peregrine.Tests.Infrastructure;

/// <summary>
/// A server with the fast path and one without (but for <see cref="KestrelFront"/>, which both
/// run), on the same tree with the same options and Kestrel settings, for tests that compare the two; a <see cref="HandOffRecorder"/> tells which
/// connections the fast path handed to Kestrel. Both have finished compressing when it starts,
/// so that both offer the same representations.
/// </summary>
public sealed class HostPair : IAsyncDisposable
{
    private HostPair(PeregrineHost plain, PeregrineHost fast, HandOffRecorder recorder)
    {
        Plain = plain;
        Fast = fast;
        Recorder = recorder;
    }

    public PeregrineHost Plain { get; }

    public PeregrineHost Fast { get; }

    public HandOffRecorder Recorder { get; }

    /// <summary>The ETag of the file named at start-up, for preconditions that match.</summary>
    public string ETag { get; private set; } = "";

    /// <summary>Its Last-Modified, as sent.</summary>
    public string LastModified { get; private set; } = "";

    /// <param name="validatorsOf">The path of a file whose validators <see cref="ETag"/> and <see cref="LastModified"/> hold.</param>
    /// <param name="reactor">Whether the fast-path server reads its connections with the standalone server's cleartext reactor (<see cref="PeregrineHost.StartAsync"/>).</param>
    public static async Task<HostPair> StartAsync(string root, Action<PeregrineOptions> configure, string validatorsOf, Action<KestrelServerOptions>? kestrel = null, bool reactor = false)
    {
        void Configure(PeregrineOptions options)
        {
            options.Watch.Enabled = false;
            configure(options);
        }

        var recorder = new HandOffRecorder();
        var pair = new HostPair(
            // The server without the fast path still has its look at each connection's first
            // head (KestrelFront), as the standalone server has.
            await PeregrineHost.StartAsync(root, Configure, kestrel: kestrel, listen: static l => l.UsePeregrineKestrelFront()),
            await PeregrineHost.StartAsync(root, Configure, fastPath: true, kestrel: kestrel, behindFastPath: recorder.Install, reactor: reactor),
            recorder);
        await pair.Plain.Services.GetRequiredService<Compressor>().WhenIdle();
        await pair.Fast.Services.GetRequiredService<Compressor>().WhenIdle();
        using var response = await pair.Plain.Client.GetAsync(validatorsOf);
        pair.ETag = response.Headers.ETag!.Tag;
        pair.LastModified = response.Content.Headers.LastModified!.Value.ToString("r");
        return pair;
    }

    public async ValueTask DisposeAsync()
    {
        await Plain.DisposeAsync();
        await Fast.DisposeAsync();
    }
}
