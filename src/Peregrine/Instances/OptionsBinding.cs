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
}
