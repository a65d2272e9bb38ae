using System.Diagnostics;
using System.Text;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.StaticWebAssets;

/// <summary>
/// Apps made as a new user makes them, with the library as a package: the library is packed
/// into a feed of this fixture's own, under a version of its own (so that no package of the same
/// version in the NuGet cache stands in for it), and each app is made from a .NET 10 template,
/// takes the package with <c>dotnet add package</c>, registers with the lambda form and is wired
/// as docs/getting-started.md and docs/migration.md say. What a user would not write is the
/// choice of wiring, read when the app starts from <c>PEREGRINE_WIRING</c>, so that one build
/// serves every wiring: <c>keep</c> (UsePeregrine before MapStaticAssets, the default), <c>swap</c>
/// (UsePeregrine instead of MapStaticAssets, no WithStaticAssets) and <c>stock</c> (no
/// UsePeregrine: the template as made). Each app is made when a test first asks for it, so that
/// a run filtered to one test builds only the apps it uses, and built once (Release), run from
/// its build output in Development and published (<c>dotnet publish --no-build</c>).
/// </summary>
public sealed class FreshApps : IDisposable
{
    /// <summary>The header the apps' <c>AddPeregrine</c> lambda adds to Peregrine's answers, which shows who answered.</summary>
    public const string ConfiguredHeader = "X-Content-Type-Options";

    /// <summary>The apps, by folder: the template and its options.</summary>
    public static readonly IReadOnlyList<(string Name, string[] Template)> All =
    [
        ("BlazorServer", ["blazor"]),
        ("BlazorWasm", ["blazor", "--interactivity", "WebAssembly"]),
        ("BlazorAuto", ["blazor", "--interactivity", "Auto"]),
        ("PagesApp", ["webapp"]),
        ("MvcApp", ["mvc"]),
    ];

    private readonly StringBuilder _timings = new();

    /// <summary>The apps made so far, each with the exception that stopped it, if one did.</summary>
    private readonly Dictionary<string, Exception?> _made = [];

    public FreshApps()
    {
        Folder = Path.Combine(Path.GetTempPath(), "peregrine-tests", "fresh-" + Environment.ProcessId + "-" + Guid.NewGuid().ToString("N")[..8]);
        Version = "0.1.0-fresh." + DateTime.UtcNow.ToString("yyyyMMddHHmmss", System.Globalization.CultureInfo.InvariantCulture) + "." + Environment.ProcessId;
        Directory.CreateDirectory(Folder);
        try
        {
            Create();
        }
        catch
        {
            Dispose();
            throw;
        }
    }

    public string Folder { get; }

    /// <summary>The version the library was packed under for this fixture.</summary>
    public string Version { get; }

    /// <summary>How long each step took, for the test output.</summary>
    public string Timings
    {
        get
        {
            lock (_timings)
            {
                return _timings.ToString();
            }
        }
    }

    /// <summary>The project folder of the app's server project (a WebAssembly or Auto app has a client project beside it), made and built.</summary>
    public string Project(string app)
    {
        Made(app);
        return ProjectIn(Folder, app);
    }

    /// <summary>The build output (Release), which Development runs.</summary>
    public string Built(string app) => Path.Combine(Project(app), "bin", "Release", "net10.0");

    public string Published(string app)
    {
        Made(app);
        return Path.Combine(Folder, "publish", app);
    }

    /// <summary>
    /// Makes <paramref name="app"/> afresh in <paramref name="folder"/> (a folder under
    /// <see cref="Folder"/>, whose feed it restores from), wired as the fixture's own but not
    /// built, for a test that changes it and builds it itself; returns its server project's folder.
    /// </summary>
    public string MakeIn(string folder, string app)
    {
        if (!Path.GetFullPath(folder).StartsWith(Path.GetFullPath(Folder) + Path.DirectorySeparatorChar, StringComparison.Ordinal))
        {
            throw new ArgumentException($"{folder} is not under {Folder}, whose nuget.config names the feed.", nameof(folder));
        }

        return Make(folder, app);
    }

    private string Make(string folder, string app)
    {
        Directory.CreateDirectory(folder);
        var template = All.Single(a => a.Name == app).Template;
        Step(app + ": new", () => TemplateApps.Dotnet(folder, ["new", .. template, "-o", app]));
        Step(app + ": add package", () => TemplateApps.Dotnet(ProjectIn(folder, app), "add", "package", "Peregrine.AspNetCore", "--version", Version));
        Wire(ProjectIn(folder, app), app);
        return ProjectIn(folder, app);
    }

    private static string ProjectIn(string folder, string app)
        => All.Single(a => a.Name == app).Template.Contains("--interactivity") ? Path.Combine(folder, app, app) : Path.Combine(folder, app);

    /// <summary>
    /// Makes, builds and publishes <paramref name="app"/> the first time a test asks for it; a
    /// later test that asks for an app that could not be made fails with the first one's reason.
    /// </summary>
    private void Made(string app)
    {
        lock (_made)
        {
            if (_made.TryGetValue(app, out var failed))
            {
                if (failed is not null)
                {
                    throw new InvalidOperationException($"{app} could not be made earlier in this run.", failed);
                }

                return;
            }

            try
            {
                var project = Make(Folder, app);
                Step(app + ": build", () => TemplateApps.Dotnet(project, "build", "-c", "Release", "-nodeReuse:false", "-p:UseSharedCompilation=false"));
                Step(app + ": publish", () => TemplateApps.Dotnet(project, "publish", "-c", "Release", "--no-build", "-o", Path.Combine(Folder, "publish", app), "-nodeReuse:false"));
                _made[app] = null;
            }
            catch (Exception e)
            {
                _made[app] = e;
                throw;
            }
        }
    }

    private void Create()
    {
        // :: pack: the library as built for this test run, under this fixture's version.
        var feed = Path.Combine(Folder, "feed");
        var configuration = new DirectoryInfo(AppContext.BaseDirectory.TrimEnd(Path.DirectorySeparatorChar)).Parent!.Name;
        Step("pack", () => TemplateApps.Dotnet(Folder, "pack", Path.Combine(RepositoryRoot.Path, "src", "Peregrine", "Peregrine.csproj"),
            "-c", configuration, "--no-build", "--no-restore", "-o", feed, "-p:Version=" + Version));
        File.WriteAllText(Path.Combine(Folder, "nuget.config"), $"""
            <?xml version="1.0" encoding="utf-8"?>
            <configuration>
              <packageSources>
                <add key="peregrine-fresh" value="{feed}" />
              </packageSources>
            </configuration>
            """);
    }

    /// <summary>Program.cs as docs/getting-started.md has it, with the wiring read at start-up.</summary>
    private static void Wire(string project, string app)
    {
        var program = Path.Combine(project, "Program.cs");
        TemplateApps.Edit(program, "var builder = WebApplication.CreateBuilder(args);", $$"""
            var builder = WebApplication.CreateBuilder(args);
            builder.Services.AddPeregrine(o => o.Headers["{{ConfiguredHeader}}"] = "nosniff");
            var wiring = Environment.GetEnvironmentVariable("PEREGRINE_WIRING") ?? "keep";
            """);
        TemplateApps.Edit(program, "app.UseHttpsRedirection();", """
            app.UseHttpsRedirection();
            if (wiring != "stock")
            {
                app.UsePeregrine();
            }
            """);
        TemplateApps.Edit(program, "app.MapStaticAssets();", """
            if (wiring != "swap")
            {
                app.MapStaticAssets();
            }
            """);
        if (app == "PagesApp")
        {
            TemplateApps.Edit(program, "app.MapRazorPages()\n   .WithStaticAssets();", """
                var pages = app.MapRazorPages();
                if (wiring != "swap")
                {
                    pages.WithStaticAssets();
                }
                """);
        }
        else if (app == "MvcApp")
        {
            TemplateApps.Edit(program, "app.MapControllerRoute(\n    name: \"default\",\n    pattern: \"{controller=Home}/{action=Index}/{id?}\")\n    .WithStaticAssets();", """
                var controllers = app.MapControllerRoute(
                    name: "default",
                    pattern: "{controller=Home}/{action=Index}/{id?}");
                if (wiring != "swap")
                {
                    controllers.WithStaticAssets();
                }
                """);
        }
    }

    private void Step(string what, Action step)
    {
        var started = Stopwatch.GetTimestamp();
        step();
        lock (_timings)
        {
            _timings.AppendLine($"{what}: {Stopwatch.GetElapsedTime(started).TotalSeconds:F1} s");
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

        // The version is this fixture's alone: what restore put in the global packages folder
        // for it is no one else's.
        var packages = Environment.GetEnvironmentVariable("NUGET_PACKAGES") is { Length: > 0 } set
            ? set
            : Path.Combine(Environment.GetFolderPath(Environment.SpecialFolder.UserProfile), ".nuget", "packages");
        try
        {
            Directory.Delete(Path.Combine(packages, "peregrine.aspnetcore", Version.ToLowerInvariant()), recursive: true);
        }
        catch (DirectoryNotFoundException)
        {
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
public sealed class FreshAppsCollection : ICollectionFixture<FreshApps>
{
    public const string Name = "Fresh apps";
}
