using System.Net;

namespace Peregrine.Tests.Infrastructure;

/// <summary>Requests as a browser sends them when following a link: GET or HEAD, accepting HTML first.</summary>
public static class Navigations
{
    public static HttpRequestMessage Request(HttpMethod method, string path)
    {
        var request = new HttpRequestMessage(method, path);
        request.Headers.Accept.ParseAdd("text/html,application/xhtml+xml,*/*;q=0.8");
        return request;
    }

    /// <summary>A GET navigation's status, and its Location when it redirects, otherwise its body.</summary>
    public static async Task<(HttpStatusCode Status, string Text)> NavigateAsync(this HttpClient client, string path)
    {
        using var request = Request(HttpMethod.Get, path);
        using var response = await client.SendAsync(request);
        return (response.StatusCode, response.Headers.Location?.OriginalString ?? await response.Content.ReadAsStringAsync());
    }
}
