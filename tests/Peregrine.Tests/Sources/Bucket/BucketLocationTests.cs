using Peregrine.Sources.Bucket;

namespace Peregrine.Tests.Sources.Bucket;

public sealed class BucketLocationTests
{
    [Theory]
    [InlineData("s3://my-bucket", "my-bucket", "")]
    [InlineData("s3://my-bucket/", "my-bucket", "")]
    [InlineData("s3://my-bucket/site", "my-bucket", "site/")]
    [InlineData("s3://my.bucket_1/a/b/", "my.bucket_1", "a/b/")]
    [InlineData("S3://b12/x y", "b12", "x y/")]
    public void Parse_Valid_BucketAndPrefix(string uri, string bucket, string prefix)
    {
        var location = BucketLocation.TryParse(uri, out var problem);
        Assert.Null(problem);
        Assert.Equal(new BucketLocation(bucket, prefix), location);
    }

    [Theory]
    [InlineData("")]
    [InlineData("/srv/site")]
    [InlineData("s3://")]
    [InlineData("s3://ab")]
    [InlineData("s3://-bucket")]
    [InlineData("s3://bucket!/p")]
    [InlineData("s3://bucket/a//b")]
    [InlineData("s3://bucket/../b")]
    [InlineData("s3://bucket/a/./b")]
    [InlineData("s3://bucket/a\u0001b")]
    public void Parse_Invalid_SaysWhy(string uri)
    {
        Assert.Null(BucketLocation.TryParse(uri, out var problem));
        Assert.False(string.IsNullOrEmpty(problem));
    }

    [Theory]
    [InlineData("p/index.html", "p/", "index.html")]
    [InlineData("p/a/b.css", "p/", "a/b.css")]
    [InlineData("p/", "p/", null)]
    [InlineData("p/dir/", "p/", null)]
    [InlineData("q/index.html", "p/", null)]
    [InlineData("p/../x", "p/", null)]
    [InlineData("p/a//b", "p/", null)]
    [InlineData("p/./b", "p/", null)]
    [InlineData("p/a\\b", "p/", null)]
    [InlineData("p/a\nb", "p/", null)]
    public void RelativePath_OnlyPlainSegments(string key, string prefix, string? expected)
        => Assert.Equal(expected, BucketPaths.RelativePath(key, prefix));
}
