// What reading a request head costs the fast path, in-process, with no socket: RequestHead.Find
// frames the head and reads it, as Http1FastPath.Process does for each request. Three heads: wrk's (request line and Host), the arena mix's (Accept-Encoding
// added), and a browser's (Chromium's fetch of a script, 13 fields). Run it once under the JIT
// and once published ahead of time, to compare the two compilers on the same code:
//
//   taskset -c 1 dotnet run -c Release --project bench/Alloc -- heads
//   dotnet publish -c Release -r linux-x64 -p:PublishAot=true bench/Alloc -o DIR && taskset -c 1 DIR/Peregrine.Bench heads
using System.Diagnostics;
using System.Text;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Peregrine.Http1;

static class Heads
{
    private const int Rounds = 7;
    private const int Warmup = 3;
    private const int HeadsPerRound = 2_000_000;

    public static void Run()
    {
        var limits = new HeadLimits(new KestrelServerLimits());
        var heads = new (string Name, byte[] Bytes)[]
        {
            ("wrk", Encoding.ASCII.GetBytes("GET /f31k.bin HTTP/1.1\r\nHost: 127.0.0.1:9080\r\n\r\n")),
            ("arena", Encoding.ASCII.GetBytes("GET /static/app.3f2a91.js HTTP/1.1\r\nHost: 127.0.0.1:9080\r\nAccept-Encoding: br;q=1, gzip;q=0.8\r\n\r\n")),
            ("browser", Encoding.ASCII.GetBytes(
                "GET /_framework/blazor.web.8k2jq1.js HTTP/1.1\r\n" +
                "Host: localhost:5000\r\n" +
                "Connection: keep-alive\r\n" +
                "sec-ch-ua-platform: \"Linux\"\r\n" +
                "User-Agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36\r\n" +
                "sec-ch-ua: \"Chromium\";v=\"131\", \"Not_A Brand\";v=\"24\"\r\n" +
                "sec-ch-ua-mobile: ?0\r\n" +
                "Accept: */*\r\n" +
                "Sec-Fetch-Site: same-origin\r\n" +
                "Sec-Fetch-Mode: no-cors\r\n" +
                "Sec-Fetch-Dest: script\r\n" +
                "Referer: http://localhost:5000/\r\n" +
                "Accept-Encoding: gzip, deflate, br, zstd\r\n" +
                "Accept-Language: en-US,en;q=0.9\r\n\r\n")),
        };

        Console.WriteLine($"ns per head, median of {Rounds} rounds of {HeadsPerRound / 1_000_000}M (min-max); {(System.Runtime.CompilerServices.RuntimeFeature.IsDynamicCodeSupported ? "JIT" : "ahead of time")}");
        Console.WriteLine();
        Console.WriteLine("| head | bytes | ns |");
        Console.WriteLine("| --- | ---: | ---: |");
        foreach (var (name, bytes) in heads)
        {
            var times = new List<double>();
            for (var round = -Warmup; round < Rounds; round++)
            {
                // The first rounds warm up (tiered JIT, caches) and are not counted.
                var ns = Time(bytes, limits);
                if (round >= 0)
                {
                    times.Add(ns);
                }
            }

            times.Sort();
            Console.WriteLine($"| {name} | {bytes.Length} | {times[Rounds / 2]:F1} ({times[0]:F1}-{times[^1]:F1}) |");
        }
    }

    private static double Time(byte[] bytes, in HeadLimits limits)
    {
        var check = 0;
        var clock = Stopwatch.StartNew();
        for (var i = 0; i < HeadsPerRound; i++)
        {
            if (RequestHead.Find(bytes, limits, out _, out var request) != HeadFraming.Complete || !request.IsAnswerable)
            {
                throw new InvalidOperationException("The head was not read.");
            }

            check += request.Path.Length;
        }

        var elapsed = clock.Elapsed;
        GC.KeepAlive(check);
        return elapsed.TotalNanoseconds / HeadsPerRound;
    }
}
