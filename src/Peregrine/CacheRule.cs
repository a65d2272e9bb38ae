namespace Peregrine;

/// <summary>A Cache-Control value for the files whose path matches a glob.</summary>
/// <param name="Glob">A glob over the path under the root, as described at <see cref="PeregrineOptions.CacheRules"/>.</param>
/// <param name="CacheControl">The Cache-Control value; empty sends none.</param>
public sealed record CacheRule(string Glob, string CacheControl);
