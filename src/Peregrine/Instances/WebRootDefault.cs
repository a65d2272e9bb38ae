using Microsoft.AspNetCore.Hosting;
using Microsoft.Extensions.Options;

namespace Peregrine.Instances;

/// <summary>
/// Gives every instance whose <see cref="PeregrineOptions.Root"/> is left empty the
/// application's web root (<see cref="IWebHostEnvironment.WebRootPath"/>, <c>wwwroot</c> by
/// default), as <c>UseStaticFiles</c> serves it. ASP.NET Core sets the web root only when the
/// folder exists; without one, Root stays empty and validation says so.
/// </summary>
internal sealed class WebRootDefault(IWebHostEnvironment? environment) : IPostConfigureOptions<PeregrineOptions>
{
    public void PostConfigure(string? name, PeregrineOptions options)
    {
        if (string.IsNullOrEmpty(options.Root) && options.Bucket is null && environment?.WebRootPath is { Length: > 0 } webRoot)
        {
            options.Root = webRoot;
        }
    }
}
