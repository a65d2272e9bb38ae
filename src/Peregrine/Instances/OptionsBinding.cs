using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Configuration;

namespace Peregrine.Instances;

/// <summary>
/// Binds <see cref="PeregrineOptions"/> from configuration through the configuration binding
/// source generator (<c>EnableConfigurationBindingGenerator</c>): the binding code is generated
/// at build time, with no reflection, so it works under Native AOT and trimming.
/// </summary>
internal static class OptionsBinding
{
    public static void Bind(IConfiguration configuration, PeregrineOptions options)
    {
        // The binder adds a list's items to the list already there; a list given in
        // configuration replaces the default instead (Encodings ["gzip"] means gzip only).
        if (Given(configuration, nameof(options.DefaultDocuments)))
        {
            options.DefaultDocuments = [];
        }

        if (Given(configuration, nameof(options.CorsOrigins)))
        {
            options.CorsOrigins = [];
        }

        if (Given(configuration, nameof(options.CacheRules)))
        {
            options.CacheRules = [];
        }

        if (Given(configuration, "Compression:Encodings"))
        {
            options.Compression.Encodings = [];
        }

        configuration.Bind(options);

        // The generator sees PathString as an object with a Value property, so it would bind
        // "RequestPath:Value" and ignore the plain "RequestPath": "/static" people write.
        if (configuration[nameof(PeregrineOptions.RequestPath)] is { } requestPath)
        {
            if (requestPath.Length != 0 && requestPath[0] != '/')
            {
                // PathString refuses such a value; say so as validation would.
                throw new InvalidOperationException($"RequestPath: '{requestPath}' must start with '/' and must not end with one.");
            }

            options.RequestPath = new PathString(requestPath);
        }
    }

    private static bool Given(IConfiguration configuration, string key) => configuration.GetSection(key).GetChildren().Any();
}
