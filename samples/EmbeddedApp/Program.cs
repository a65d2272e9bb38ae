// Peregrine as a drop-in for UseStaticFiles.
//   dotnet run --project samples/EmbeddedApp                  (serves ./samples/site)
//   dotnet run --project samples/EmbeddedApp -- /path/to/site (serves another folder)
// Then open http://localhost:5000/static/
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

var app = builder.Build();
app.UsePeregrine();
app.MapGet("/", () => "Hello from an app; static files are under /static/");
app.Run();
