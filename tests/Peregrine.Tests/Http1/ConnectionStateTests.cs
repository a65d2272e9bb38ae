using System.Buffers;
using Peregrine.Http1;
using Outcome = Peregrine.Http1.Http1FastPath.Outcome;
using Progress = Peregrine.Http1.SocketOutput.Progress;

namespace Peregrine.Tests.Http1;

// The connection's one interpreter, without I/O: each outcome of an answer and each send's
// progress, in each shell, gives one step. (The enums are internal: the tables name them.)
public sealed class ConnectionStateTests
{
    [Theory]
    // Everything answered has gone: the outcome alone decides.
    [InlineData("NeedMore", "Done", false, "Read")]
    [InlineData("NeedMore", "Done", true, "Read")]
    [InlineData("Flush", "Done", true, "Answer")]
    [InlineData("Warm", "Done", true, "Park")]
    [InlineData("Close", "Done", false, "Close")]
    [InlineData("Close", "Done", true, "Close")]
    [InlineData("HandOff", "Done", true, "HandOn")]
    [InlineData("Lend", "Done", true, "Lend")]
    // The client stopped taking its output, or left: whatever was decided.
    [InlineData("NeedMore", "Failed", false, "Close")]
    [InlineData("Flush", "Failed", true, "Close")]
    [InlineData("Warm", "Failed", true, "Close")]
    [InlineData("HandOff", "Failed", true, "Close")]
    [InlineData("Lend", "Failed", true, "Close")]
    // Output waits: Kestrel's loop sends it first, however much was read behind it.
    [InlineData("NeedMore", "Full", true, "Send")]
    [InlineData("Flush", "Full", true, "Send")]
    [InlineData("Lend", "Full", true, "Send")]
    [InlineData("Close", "Full", false, "Send")]
    public void InKestrelsLoop_EachOutcomeAndProgress_GivesOneStep(string outcome, string progress, bool behind, string step)
    {
        var state = new ConnectionState(output: null, inReactor: false);

        Assert.Equal(step, state.Next(Enum.Parse<Outcome>(outcome), Enum.Parse<Progress>(progress), answered: true, behind).ToString());
    }

    [Theory]
    [InlineData("NeedMore", "Done", false, "Read")]
    [InlineData("NeedMore", "Done", true, "Read")]
    [InlineData("Flush", "Done", true, "Answer")]
    [InlineData("Warm", "Done", true, "Park")]
    [InlineData("Close", "Done", true, "Close")]
    [InlineData("HandOff", "Done", true, "HandOn")]
    // The reactor cannot lend: Kestrel's loop reads the head again and lends it.
    [InlineData("Lend", "Done", true, "HandOn")]
    [InlineData("Close", "Failed", false, "Close")]
    [InlineData("NeedMore", "Failed", false, "Close")]
    // Output waits: the reactor waits for room only for the last response, or one with
    // nothing read behind it; the rarer shapes go to Kestrel's loop.
    [InlineData("Close", "Full", true, "Send")]
    [InlineData("NeedMore", "Full", false, "Send")]
    [InlineData("NeedMore", "Full", true, "HandOn")]
    [InlineData("Flush", "Full", true, "HandOn")]
    [InlineData("Warm", "Full", true, "HandOn")]
    [InlineData("Lend", "Full", true, "HandOn")]
    [InlineData("HandOff", "Full", true, "HandOn")]
    public void InTheReactor_EachOutcomeAndProgress_GivesOneStep(string outcome, string progress, bool behind, string step)
    {
        var state = new ConnectionState(output: null, inReactor: true);

        Assert.Equal(step, state.Next(Enum.Parse<Outcome>(outcome), Enum.Parse<Progress>(progress), answered: true, behind).ToString());
    }

    [Theory]
    // Once the waiting output has gone: the last response closes, a head handed off is
    // Kestrel's, anything else is read on; until then, the send goes on; a failure closes.
    [InlineData("Close", "Done", "Close")]
    [InlineData("Close", "Full", "Send")]
    [InlineData("Close", "Failed", "Close")]
    [InlineData("NeedMore", "Done", "Read")]
    [InlineData("NeedMore", "Failed", "Close")]
    [InlineData("HandOff", "Done", "HandOn")]
    [InlineData("Lend", "Done", "Read")]
    [InlineData("Flush", "Done", "Read")]
    [InlineData("Warm", "Done", "Read")]
    public void AfterTheWaitingOutputIsSent_TheStepFollowsWhatWasDecided(string outcome, string progress, string step)
    {
        var state = new ConnectionState(output: null, inReactor: true);
        state.Next(Enum.Parse<Outcome>(outcome), Progress.Full, answered: true, behind: true);

        Assert.Equal(step, state.Next(Enum.Parse<Progress>(progress)).ToString());
    }

    [Fact]
    public void Lend_CountsTheLentAndEndsTheFirstRequest()
    {
        var state = new ConnectionState(output: null, inReactor: false);

        Assert.Equal(ConnectionStep.Lend, state.Next(Outcome.Lend, Progress.Done, answered: false, behind: true));
        Assert.False(state.First);
        Assert.Equal(1, state.LentInARow);
    }

    [Fact]
    public void Lend_AfterTheMostInARow_HandsTheConnectionOn()
    {
        var state = new ConnectionState(output: null, inReactor: false);
        for (var i = 0; i < ConnectionState.MaxLentInARow; i++)
        {
            Assert.Equal(ConnectionStep.Lend, state.Next(Outcome.Lend, Progress.Done, answered: false, behind: true));
        }

        Assert.Equal(ConnectionStep.HandOn, state.Next(Outcome.Lend, Progress.Done, answered: false, behind: true));
    }

    [Fact]
    public void Lend_AfterAnAnsweredRequest_CountsFromNothingAgain()
    {
        var state = new ConnectionState(output: null, inReactor: false);
        for (var i = 0; i < ConnectionState.MaxLentInARow; i++)
        {
            state.Next(Outcome.Lend, Progress.Done, answered: false, behind: true);
        }

        Assert.Equal(ConnectionStep.Lend, state.Next(Outcome.Lend, Progress.Done, answered: true, behind: true));
        Assert.Equal(1, state.LentInARow);
    }

    [Fact]
    public void HandedOn_ANewConnectionWithNothingWaiting_CarriesNothing()
    {
        var state = new ConnectionState(output: null, inReactor: true);

        Assert.Equal(ConnectionStep.HandOn, state.Next(Outcome.Lend, Progress.Done, answered: false, behind: true));
        Assert.False(state.HandedOn());
        Assert.False(state.InReactor);
    }

    [Theory]
    // A request answered, a head that is Kestrel's, a connection to close after its output.
    [InlineData("NeedMore", true)]
    [InlineData("HandOff", false)]
    [InlineData("Close", false)]
    public void HandedOn_WithSomethingForKestrelsLoop_CarriesTheState(string outcome, bool answered)
    {
        var state = new ConnectionState(output: null, inReactor: true);
        if (answered)
        {
            state.First = false;
        }

        state.Next(Enum.Parse<Outcome>(outcome), outcome == "Close" ? Progress.Full : Progress.Done, answered, behind: false);

        Assert.True(state.HandedOn());
    }

    [Fact]
    public void Stop_WhileOutputWaits_ClosesOnceItHasGone()
    {
        var state = new ConnectionState(output: null, inReactor: true);
        state.Next(Outcome.NeedMore, Progress.Full, answered: true, behind: false);

        state.Stop();

        Assert.True(state.Closing);
        Assert.Equal(ConnectionStep.Close, state.Next(Progress.Done));
    }

    [Fact]
    public void Keep_ThenJoin_FramesTheCopyWithWhatCameSince()
    {
        var state = new ConnectionState(output: null, inReactor: false);
        state.Keep(new ReadOnlySequence<byte>("GET / HT"u8.ToArray()));

        var joined = state.Join(new ReadOnlySequence<byte>("TP/1.1\r\n\r\nrest"u8.ToArray()), 10);

        Assert.Equal("GET / HTTP/1.1\r\n\r\n", System.Text.Encoding.ASCII.GetString(joined.ToArray()));
        state.Unkeep();
        Assert.Null(state.Stash);
        Assert.Equal(0, state.Stashed);
    }
}
