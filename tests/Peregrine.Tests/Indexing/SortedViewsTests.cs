using Peregrine.Indexing;
using Peregrine.Listing;
using static Peregrine.Tests.Listing.ListingFixtures;

namespace Peregrine.Tests.Indexing;

public sealed class SortedViewsTests
{
    // Sizes and times are chosen so that every order differs from name order.
    private static readonly SortedViews Mixed = Views(
        File("b.txt", length: 300, minutes: 1),
        Directory("zeta", minutes: 5),
        File("README", length: 10, minutes: 3),
        File("a.txt", length: 2000, minutes: 2),
        Directory("Alpha", minutes: 9),
        File("c.txt", length: 10, minutes: 0),
        Directory("mid", minutes: 7));

    [Theory]
    [InlineData("name", false, "Alpha/ mid/ zeta/ a.txt b.txt c.txt README")]
    [InlineData("name", true, "zeta/ mid/ Alpha/ README c.txt b.txt a.txt")]
    // Directories have no size: they keep name order. Equal sizes keep name order too.
    [InlineData("size", false, "Alpha/ mid/ zeta/ c.txt README b.txt a.txt")]
    [InlineData("size", true, "zeta/ mid/ Alpha/ a.txt b.txt README c.txt")]
    [InlineData("date", false, "zeta/ mid/ Alpha/ c.txt b.txt a.txt README")]
    [InlineData("date", true, "Alpha/ mid/ zeta/ README a.txt b.txt c.txt")]
    public void Order_AnySortAndDirection_PutsDirectoriesFirstThenFiles(string sortName, bool descending, string expected)
    {
        var sort = Sort(sortName);
        Assert.Equal(expected, Names(Mixed, new ListingQuery(sort, descending, 1, 100)));
    }

    [Fact]
    public void Create_NamesThatDifferOnlyInCase_OrdersThemOrdinallyAsATieBreak()
    {
        var views = Views(File("b"), File("B"), File("a"), File("A"));

        Assert.Equal("A a B b", Names(views, default));
    }

    [Theory]
    [InlineData(".git")]
    [InlineData(".env")]
    [InlineData(".")]
    [InlineData("..")]
    [InlineData("")]
    public void Create_HiddenOrUnlinkableName_IsLeftOut(string name)
    {
        var views = Views(File("kept.txt"), File(name), Directory(name));

        Assert.Equal("kept.txt", Names(views, default));
        Assert.Equal(1, views.Count);
        Assert.Equal(0, views.DirectoryCount);
    }

    [Fact]
    public void Create_NameThatIsNotValidUtf16_IsLeftOut()
    {
        // Built here rather than in a theory table: xunit's serialization of theory data replaces
        // lone surrogates with U+FFFD, which would test a different name.
        var views = Views(File("kept.txt"), File("lone" + '\uD800' + "high"), Directory('\uDC00' + "low"), File("swapped" + '\uDE00' + '\uD83D'));

        Assert.Equal("kept.txt", Names(views, default));
    }

    [Fact]
    public void Create_NameWithAValidSurrogatePair_IsKept()
    {
        var views = Views(File("emoji-\U0001F600.txt"));

        Assert.Equal(1, views.Count);
    }

    [Fact]
    public void Create_CountsDirectoriesAndFiles()
    {
        Assert.Equal((7, 3, 4), (Mixed.Count, Mixed.DirectoryCount, Mixed.FileCount));
    }

    [Fact]
    public void Create_InputChangedAfterwards_LeavesTheViewsAsBuilt()
    {
        var items = new[] { File("a"), File("b") };
        var views = SortedViews.Create(items);

        items[0] = File("z");

        Assert.Equal("a b", Names(views, default));
    }

    [Fact]
    public void Create_NoEntries_IsEmpty()
    {
        Assert.Same(SortedViews.Empty, SortedViews.Create([]));
        Assert.Same(SortedViews.Empty, Views(File(".hidden")));
    }

    [Theory]
    // 25 entries, 10 a page: pages of 10, 10 and 5.
    [InlineData(1, 1, 3, 0, 10)]
    [InlineData(2, 2, 3, 10, 10)]
    [InlineData(3, 3, 3, 20, 5)]
    // Past the end shows the last page rather than nothing; below 1 shows the first.
    [InlineData(4, 3, 3, 20, 5)]
    [InlineData(int.MaxValue, 3, 3, 20, 5)]
    [InlineData(0, 1, 3, 0, 10)]
    [InlineData(-5, 1, 3, 0, 10)]
    public void Page_RequestedPage_IsClampedToThePagesThatExist(int requested, int number, int pages, int start, int count)
    {
        var views = Views([.. Enumerable.Range(0, 25).Select(i => File($"f{i:D2}"))]);

        Assert.Equal(new ListingPage(number, pages, 10, start, count), views.Page(new ListingQuery(ListingSort.Name, false, requested, 10)));
    }

    [Theory]
    [InlineData(0, DirectoryListing.DefaultPageSize)]
    [InlineData(-1, DirectoryListing.DefaultPageSize)]
    [InlineData(1, 1)]
    [InlineData(250, 250)]
    [InlineData(DirectoryListing.MaxPageSize + 1, DirectoryListing.MaxPageSize)]
    [InlineData(int.MaxValue, DirectoryListing.MaxPageSize)]
    public void Page_PageSize_IsDefaultedAndCapped(int requested, int size)
    {
        Assert.Equal(size, Mixed.Page(new ListingQuery(ListingSort.Name, false, 1, requested)).Size);
    }

    [Fact]
    public void Page_EmptyFolder_IsPageOneOfOneWithNothingOnIt()
    {
        Assert.Equal(new ListingPage(1, 1, DirectoryListing.DefaultPageSize, 0, 0), SortedViews.Empty.Page(new ListingQuery(ListingSort.Name, false, 7, 0)));
    }

    [Fact]
    public void Page_SecondOfThree_ContinuesAcrossTheDirectoryFileBoundary()
    {
        // 3 directories and 4 files, 3 a page: page 1 is the directories, page 2 the first three files.
        var query = new ListingQuery(ListingSort.Name, false, 2, 3);

        Assert.Equal("a.txt b.txt c.txt", Names(Mixed, query));
        Assert.Equal("README", Names(Mixed, query with { Page = 3 }));
        Assert.Equal("README c.txt b.txt", Names(Mixed, query with { Descending = true }));
    }

    [Theory]
    [InlineData(-1)]
    [InlineData(7)]
    public void At_PositionOutsideTheListing_Throws(int position)
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => Mixed.At(ListingSort.Name, false, position));
    }
}
