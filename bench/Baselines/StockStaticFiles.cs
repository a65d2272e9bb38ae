using Microsoft.AspNetCore.StaticFiles;
using Microsoft.Extensions.FileProviders;

namespace Peregrine.Bench.Baselines;

/// <summary>
/// Stock Kestrel: <c>UseStaticFiles()</c> over the benchmark root with default options.
/// </summary>
internal static class StockStaticFiles
{
    public static StaticFileOptions Options(string root) => new()
    {
        FileProvider = new PhysicalFileProvider(root),
    };
}
