// Peregrine as a drop-in for UseStaticFiles, with two instances: the whole site under /static,
// and its docs folder as an endpoint under /docs, behind a rate limit, as an application would
// put a folder behind RequireAuthorization().
//   dotnet run --project samples/EmbeddedApp                  (serves ./samples/site)
//   dotnet run --project samples/EmbeddedApp -- /path/to/site (serves another folder)
// Then open http://localhost:5000/static/ and http://localhost:5000/docs/; readiness at /health.
using Microsoft.AspNetCore.RateLimiting;
using Peregrine;

// An optional first argument (not a --switch) is the site root; the rest goes to ASP.NET Core configuration.
var hasRootArg = args.Length > 0 && !args[0].StartsWith('-');
var siteRoot = Path.GetFullPath(hasRootArg ? args[0] : Path.Combine("samples", "site"));

var builder = WebApplication.CreateSlimBuilder(hasRootArg ? args[1..] : args);
builder.Services.AddPeregrine(options =>
{
    options.Root = siteRoot;
    options.RequestPath = "/static";
    options.NotFoundPage = "404.html";   // the body of a 404 for a page missing under /static
});

// A named instance: its own options, index, watcher and compression.
builder.Services.AddPeregrine("docs", options => options.Root = Path.Combine(siteRoot, "docs"));
builder.Services.AddRateLimiter(limiter => limiter.AddFixedWindowLimiter("docs", window =>
{
    window.PermitLimit = 100;
    window.Window = TimeSpan.FromSeconds(1);
}));
builder.Services.AddHealthChecks().AddPeregrineCheck().AddPeregrineCheck("docs");

var app = builder.Build();
app.UsePeregrine();
app.UseRateLimiter();
app.MapPeregrine("/docs/{**path}", "docs").RequireRateLimiting("docs");
app.MapHealthChecks("/health");
app.MapGet("/", () => "Hello from an app; static files are under /static/, docs under /docs/");
app.Run();
