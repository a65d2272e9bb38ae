namespace Peregrine.Profile;

/// <summary>
/// peregrine-profile: a stand-in for dotnet-pgo's <c>create-mibc</c> and <c>dump</c> (dotnet-pgo is
/// built from dotnet/runtime's sources and ships in no package). bench/layout/make-profile runs it;
/// see that script for how the traces are taken.
/// </summary>
internal static class Program
{
    const string Usage = """
        usage: peregrine-profile create-mibc --trace T.nettrace [--trace T2.nettrace]... [--reference DIR]...
                                             [--assembly NAME[*]]... --output X.mibc [--uncompressed]
               peregrine-profile dump X.mibc [OUT.txt]

        create-mibc  writes the JitInstrumentationData of the traces as a .mibc for ILC's --mibc.
                     --reference DIR: look for the traced modules' files here first (by file name).
                     --assembly NAME: only this assembly's methods (a trailing * matches a prefix).
                     --uncompressed: the bare assembly rather than the zip dotnet-pgo writes.
        dump         lists the groups, methods and schema entries of a .mibc (to OUT.txt if given).
        """;

    static int Main(string[] args)
    {
        try
        {
            return args switch
            {
                ["create-mibc", .. var rest] => CreateMibc.Run(ParseCreate(rest)),
                ["dump", var file] => MibcDump.Run(file, null),
                ["dump", var file, var output] => MibcDump.Run(file, output),
                ["-h" or "--help"] => Help(),
                [] => throw new UsageException("no command"),
                ["dump", ..] => throw new UsageException("dump takes a .mibc file and, optionally, an output file"),
                [var command, ..] => throw new UsageException($"unknown command '{command}'"),
            };
        }
        catch (UsageException e)
        {
            Console.Error.WriteLine($"peregrine-profile: {e.Message}");
            Console.Error.WriteLine(Usage);
            return 2;
        }
        catch (ProfileException e)
        {
            // Expected failures (a missing or unreadable file) get a message, not a stack trace.
            Console.Error.WriteLine($"peregrine-profile: {e.Message}");
            return 1;
        }
    }

    static int Help()
    {
        Console.WriteLine(Usage);
        return 0;
    }

    /// <summary>The options of create-mibc; every error in them is reported together.</summary>
    static CreateOptions ParseCreate(string[] args)
    {
        var traces = new List<string>();
        var references = new List<string>();
        var assemblies = new List<string>();
        var errors = new List<string>();
        string? output = null;
        bool uncompressed = false;
        for (int i = 0; i < args.Length; i++)
        {
            string option = args[i];
            if (option == "--uncompressed")
            {
                uncompressed = true;
                continue;
            }

            if (option is not ("--trace" or "--reference" or "--assembly" or "--output"))
            {
                errors.Add($"unknown option '{option}'");
                continue;
            }

            if (i + 1 >= args.Length)
            {
                errors.Add($"{option} needs a value");
                break;
            }

            string value = args[++i];
            switch (option)
            {
                case "--trace": traces.Add(value); break;
                case "--reference": references.Add(value); break;
                case "--assembly": assemblies.Add(value); break;
                default: output = value; break;
            }
        }

        if (traces.Count == 0) errors.Add("no --trace given");
        if (output is null) errors.Add("no --output given");
        errors.AddRange(traces.Where(t => !File.Exists(t)).Select(t => $"--trace {t}: no such file"));
        errors.AddRange(references.Where(r => !Directory.Exists(r)).Select(r => $"--reference {r}: no such folder"));
        if (output is not null && Path.GetDirectoryName(Path.GetFullPath(output)) is { } folder && !Directory.Exists(folder))
        {
            errors.Add($"--output {output}: no folder {folder}");
        }

        if (errors.Count > 0 || output is null)
        {
            throw new UsageException(string.Join(Environment.NewLine + "peregrine-profile: ", errors));
        }

        return new CreateOptions(traces, references, assemblies, output, uncompressed);
    }
}

/// <summary>A command line that cannot be run: the message, then the usage, exit code 2.</summary>
internal sealed class UsageException(string message) : Exception(message);

/// <summary>An expected failure (a file missing, unreadable or of the wrong kind): the message, exit code 1.</summary>
internal sealed class ProfileException(string message) : Exception(message);
