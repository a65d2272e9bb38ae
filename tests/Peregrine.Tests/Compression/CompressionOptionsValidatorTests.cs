using Peregrine.Compression;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Compression;

public sealed class CompressionOptionsValidatorTests
{
    [Fact]
    public void DefaultOptions_AreValid()
    {
        Assert.Empty(Collect(new CompressionOptions()));
    }

    [Theory]
    [InlineData("br", null)]
    [InlineData("BR,Gzip,zstd", null)]
    [InlineData("", null)]
    [InlineData("deflate", "Compression.Encodings: 'deflate' is not supported (br, zstd, gzip).")]
    [InlineData("br,compress", "Compression.Encodings: 'compress' is not supported (br, zstd, gzip).")]
    [InlineData("x-gzip", "Compression.Encodings: 'x-gzip' is not supported (br, zstd, gzip).")]
    [InlineData("br,gzip,br", "Compression.Encodings: 'br' is listed more than once.")]
    [InlineData("gzip,GZIP", "Compression.Encodings: 'GZIP' is listed more than once.")]
    public void Encodings_AreCheckedOneByOne(string list, string? error)
    {
        var options = new CompressionOptions { Encodings = list.Length == 0 ? [] : list.Split(',') };

        Assert.Equal(error is null ? [] : [error], Collect(options));
    }

    [Theory]
    [InlineData(1, 1024L, "Compression.Dictionaries.MaxVersions: 1 must be between 2 (the current version and one before it) and 64.")]
    [InlineData(65, 1024L, "Compression.Dictionaries.MaxVersions: 65 must be between 2 (the current version and one before it) and 64.")]
    [InlineData(2, 0L, "Compression.Dictionaries.MaxBytes: 0 must be more than 0.")]
    [InlineData(64, 1L, null)]
    public void Dictionaries_AreChecked(int maxVersions, long maxBytes, string? error)
    {
        var options = new CompressionOptions { Dictionaries = new DictionaryOptions { MaxVersions = maxVersions, MaxBytes = maxBytes } };

        Assert.Equal(error is null ? [] : [error], Collect(options));
    }

    [Fact]
    public void Dictionaries_ThatAreNull_AreReported()
    {
        Assert.Equal(["Compression.Dictionaries: a value is required."], Collect(new CompressionOptions { Dictionaries = null! }));
    }

    [Fact]
    public void Encodings_ThatAreNotAList_AreReported()
    {
        var errors = Collect(new CompressionOptions { Encodings = null! });

        Assert.Equal(["Compression.Encodings: must be a list (it may be empty)."], errors);
    }

    [Theory]
    [InlineData(-1, false)]
    [InlineData(0, true)]
    [InlineData(1, true)]
    [InlineData(64, true)]
    public void MaxParallelism_MustNotBeNegative(int value, bool valid)
    {
        var errors = Collect(new CompressionOptions { MaxParallelism = value });

        Assert.Equal(valid, errors.Count == 0);
        Assert.All(errors, error => Assert.StartsWith("Compression.MaxParallelism: ", error));
    }

    [Theory]
    [InlineData(-5, false)]
    [InlineData(0, false)]
    [InlineData(1, true)]
    [InlineData(1024L * 1024 * 1024, true)]
    [InlineData(1024L * 1024 * 1024 + 1, false)]
    public void MaxFileSize_MustBePositiveAndAtMostOneGibibyte(long value, bool valid)
    {
        var errors = Collect(new CompressionOptions { MaxFileSize = value });

        Assert.Equal(valid, errors.Count == 0);
        Assert.All(errors, error => Assert.StartsWith("Compression.MaxFileSize: ", error));
    }

    [Theory]
    [InlineData(ManifestEncodingPolicy.AsStated, true)]
    [InlineData(ManifestEncodingPolicy.PreferOwn, true)]
    [InlineData((ManifestEncodingPolicy)7, false)]
    public void ManifestEncodings_MustBeANamedPolicy(ManifestEncodingPolicy value, bool valid)
    {
        var errors = Collect(new CompressionOptions { ManifestEncodings = value });

        Assert.Equal(valid, errors.Count == 0);
        Assert.All(errors, error => Assert.StartsWith("Compression.ManifestEncodings: ", error));
    }

    [Fact]
    public void CacheDirectory_ThatIsAFile_IsReported()
    {
        using var tree = new TempTree();
        var file = tree.Write("cache", "not a folder");

        var errors = Collect(new CompressionOptions { CacheDirectory = file });

        Assert.Equal([$"Compression.CacheDirectory: '{file}' is a file, not a folder."], errors);
    }

    [Fact]
    public void CacheDirectory_ThatCannotBeCreated_IsReported()
    {
        using var tree = new TempTree();
        var file = tree.Write("cache", "not a folder");

        var errors = Collect(new CompressionOptions { CacheDirectory = Path.Combine(file, "inside") });

        var error = Assert.Single(errors);
        Assert.StartsWith("Compression.CacheDirectory: ", error);
        Assert.Contains("cannot be created", error);
    }

    [Fact]
    public void CacheDirectory_ThatIsMissing_IsCreatedAndLeftEmpty()
    {
        using var tree = new TempTree();
        var folder = Path.Combine(tree.Root, "a", "cache");

        var errors = Collect(new CompressionOptions { CacheDirectory = folder });

        Assert.Empty(errors);
        Assert.Empty(Directory.GetFileSystemEntries(folder));
    }

    [Fact]
    public void CacheDirectory_ThatIsBlank_IsReported()
    {
        var errors = Collect(new CompressionOptions { CacheDirectory = "  " });

        Assert.Equal(["Compression.CacheDirectory: must be a folder path, or not set."], errors);
    }

    [Fact]
    public void EveryError_IsReportedTogether()
    {
        var errors = Collect(new CompressionOptions { Encodings = ["deflate", "br", "br"], MaxParallelism = -2, MaxFileSize = 0 });

        Assert.Equal(4, errors.Count);
    }

    private static List<string> Collect(CompressionOptions options)
    {
        var errors = new List<string>();
        CompressionOptionsValidator.Collect(options, errors);
        return errors;
    }
}
