using System.Diagnostics;
using System.Text;

namespace Peregrine.Tests.StaticWebAssets;

/// <summary>
/// Apps made fresh from the .NET SDK's templates, as a new user makes them: <c>dotnet new
/// razorclasslib</c> (Lib, with a stylesheet of its own in <c>wwwroot</c>), and <c>dotnet new
/// blazor</c> and <c>dotnet new webapp</c> each referencing it and linking that stylesheet. Each
/// app's <c>Program.cs</c> gets <c>builder.Services.AddPeregrine()</c> and <c>app.UsePeregrine()</c>
/// where <c>app.MapStaticAssets()</c> was, and keeps <c>MapStaticAssets</c> (and
/// <c>WithStaticAssets</c>) unless it runs with <c>PEREGRINE_WIRING=swap</c>; with
/// <c>PEREGRINE_WIRING=stock</c> it leaves <c>UsePeregrine()</c> out, and is the template's app
/// as made (bench/staticassets/make-apps makes the same apps). A middleware just
/// after Peregrine marks every response that went past it with <see cref="PastPeregrine"/>.
/// Both apps are built (Debug) and published (Release), once for the test run.
/// </summary>
public sealed class TemplateApps : IDisposable
{
    public const string PastPeregrine = "X-Past-Peregrine";

    /// <summary>The top-level files of the folders a Development test may edit, as the build left them.</summary>
    private readonly Dictionary<string, byte[]> _asBuilt = [];

    public TemplateApps()
    {
        Folder = Path.Combine(Path.GetTempPath(), "peregrine-tests", "swa-" + Environment.ProcessId + "-" + Guid.NewGuid().ToString("N")[..8]);
        Directory.CreateDirectory(Folder);
        try
        {
            Create();
            foreach (var folder in EditableFolders())
            {
                foreach (var file in Directory.EnumerateFiles(folder))
                {
                    _asBuilt[file] = File.ReadAllBytes(file);
                }
            }
        }
        catch
        {
            Dispose();
            throw;
        }
    }

    public string Folder { get; }

    /// <summary>The project folder of <paramref name="app"/> (<c>BlazorApp</c>, <c>PagesApp</c>, <c>Lib</c>).</summary>
    public string Project(string app) => Path.Combine(Folder, app);

    /// <summary>Where <paramref name="app"/> was published.</summary>
    public string Published(string app) => Path.Combine(Folder, "publish", app);

    /// <summary>The Debug build output of <paramref name="app"/>.</summary>
    public string Built(string app) => Path.Combine(Project(app), "bin", "Debug", "net10.0");

    /// <summary>
    /// Writes back what a test edited in the Development inputs (the app's and the library's
    /// <c>wwwroot</c>, the scoped CSS bundle): the apps are shared by the collection, and a test
    /// that needs them as built, such as one that opens the page in a browser, calls this first.
    /// </summary>
    public void UndoEdits()
    {
        foreach (var (file, content) in _asBuilt)
        {
            if (!File.Exists(file) || !File.ReadAllBytes(file).AsSpan().SequenceEqual(content))
            {
                File.WriteAllBytes(file, content);
            }
        }
    }

    private IEnumerable<string> EditableFolders() =>
    [
        Path.Combine(Project("BlazorApp"), "wwwroot"),
        Path.Combine(Project("Lib"), "wwwroot"),
        Path.Combine(Project("BlazorApp"), "obj", "Debug", "net10.0", "scopedcss", "bundle"),
    ];

    private void Create()
    {
        Dotnet(Folder, "new", "razorclasslib", "-o", "Lib");
        File.WriteAllText(Path.Combine(Project("Lib"), "wwwroot", "lib.css"), ".lib-marker { color: rebeccapurple; }\n");

        Dotnet(Folder, "new", "blazor", "-o", "BlazorApp");
        Dotnet(Folder, "new", "webapp", "-o", "PagesApp");
        var peregrine = Path.Combine(AppContext.BaseDirectory, "Peregrine.dll");
        foreach (var app in (string[])["BlazorApp", "PagesApp"])
        {
            Dotnet(Folder, "add", app, "reference", Path.Combine("Lib", "Lib.csproj"));

            // The library as built for this test run, not a second build of its sources.
            Edit(Path.Combine(Project(app), app + ".csproj"), "</Project>", $"""
                  <ItemGroup>
                    <Reference Include="Peregrine"><HintPath>{peregrine}</HintPath></Reference>
                  </ItemGroup>
                </Project>
                """);
            Edit(Path.Combine(Project(app), "Program.cs"), "var builder = WebApplication.CreateBuilder(args);", """
                var builder = WebApplication.CreateBuilder(args);
                builder.Services.AddPeregrine();
                var wiring = Environment.GetEnvironmentVariable("PEREGRINE_WIRING");
                var keep = wiring != "swap";
                """);
            Edit(Path.Combine(Project(app), "Program.cs"), "app.MapStaticAssets();", $$"""
                if (wiring != "stock")
                {
                    app.UsePeregrine();
                }

                app.Use((context, next) =>
                {
                    context.Response.Headers["{{PastPeregrine}}"] = "1";
                    return next(context);
                });
                if (keep)
                {
                    app.MapStaticAssets();
                }
                """);
        }

        Edit(Path.Combine(Project("BlazorApp"), "Components", "App.razor"), "<ImportMap />", """
            <link rel="stylesheet" href="@Assets["_content/Lib/lib.css"]" />
                <ImportMap />
            """);
        Edit(Path.Combine(Project("BlazorApp"), "Components", "Pages", "Home.razor"), "Welcome to your new app.", "Welcome to your new app. <Lib.Component1 />");
        Edit(Path.Combine(Project("PagesApp"), "Program.cs"), "app.MapRazorPages()\n   .WithStaticAssets();", """
            var pages = app.MapRazorPages();
            if (keep)
            {
                pages.WithStaticAssets();
            }
            """);
        Edit(Path.Combine(Project("PagesApp"), "Pages", "Shared", "_Layout.cshtml"), "<link rel=\"stylesheet\" href=\"~/css/site.css\" asp-append-version=\"true\" />", """
            <link rel="stylesheet" href="~/css/site.css" asp-append-version="true" />
                <link rel="stylesheet" href="~/_content/Lib/lib.css" asp-append-version="true" />
            """);

        foreach (var app in (string[])["BlazorApp", "PagesApp"])
        {
            Dotnet(Project(app), "build", "-nodeReuse:false", "-p:UseSharedCompilation=false");
            Dotnet(Project(app), "publish", "-c", "Release", "-o", Published(app), "-nodeReuse:false", "-p:UseSharedCompilation=false");
        }
    }

    internal static void Edit(string path, string find, string replace)
    {
        var text = File.ReadAllText(path).ReplaceLineEndings("\n");
        if (!text.Contains(find, StringComparison.Ordinal))
        {
            throw new InvalidOperationException($"The template's {Path.GetFileName(path)} no longer holds '{find}': the fixture must follow the template.");
        }

        File.WriteAllText(path, text.Replace(find, replace, StringComparison.Ordinal));
    }

    /// <summary>Runs the SDK, in a clean MSBuild environment (the test host's own would leak into it), and fails with its output.</summary>
    internal static void Dotnet(string workingDirectory, params string[] arguments)
    {
        var start = new ProcessStartInfo("dotnet") { WorkingDirectory = workingDirectory, RedirectStandardOutput = true, RedirectStandardError = true };
        foreach (var argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }

        Clean(start);
        start.Environment["DOTNET_CLI_TELEMETRY_OPTOUT"] = "1";
        start.Environment["DOTNET_NOLOGO"] = "1";
        start.Environment["DOTNET_SKIP_FIRST_TIME_EXPERIENCE"] = "1";
        using var process = Process.Start(start)!;
        var output = new StringBuilder();
        process.OutputDataReceived += (_, e) => { lock (output) { output.AppendLine(e.Data); } };
        process.ErrorDataReceived += (_, e) => { lock (output) { output.AppendLine(e.Data); } };
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        if (!process.WaitForExit(TimeSpan.FromMinutes(5)))
        {
            process.Kill(entireProcessTree: true);
            throw new TimeoutException($"dotnet {string.Join(' ', arguments)} did not finish in 5 minutes:\n{output}");
        }

        process.WaitForExit();
        if (process.ExitCode != 0)
        {
            throw new InvalidOperationException($"dotnet {string.Join(' ', arguments)} exited with {process.ExitCode}:\n{output}");
        }
    }

    /// <summary>Takes out what <c>dotnet test</c> sets for its own MSBuild, which would point a nested build at the wrong SDK parts.</summary>
    internal static void Clean(ProcessStartInfo start)
    {
        foreach (var key in start.Environment.Keys.ToList())
        {
            if (key.StartsWith("MSBuild", StringComparison.OrdinalIgnoreCase) || key.StartsWith("VSTEST", StringComparison.OrdinalIgnoreCase)
                || key.Equals("DOTNET_HOST_PATH", StringComparison.OrdinalIgnoreCase) || key.StartsWith("ASPNETCORE_", StringComparison.OrdinalIgnoreCase))
            {
                start.Environment.Remove(key);
            }
        }
    }

    public void Dispose()
    {
        try
        {
            Directory.Delete(Folder, recursive: true);
        }
        catch (IOException)
        {
        }
        catch (UnauthorizedAccessException)
        {
        }
    }
}

[CollectionDefinition(Name)]
public sealed class TemplateAppsCollection : ICollectionFixture<TemplateApps>
{
    public const string Name = "Template apps";
}
