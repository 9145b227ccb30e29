package temporal

import (
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/testsuite"
)

// TestSmokeWorkflowUnit runs SmokeWorkflow in the SDK's test environment
// with a mocked Greet, sending the given Updates in order.
func TestSmokeWorkflowUnit(t *testing.T) {
	tests := []struct {
		name     string
		notes    []string // Updates sent, in order
		wantAcks []string // one per Update: the result, or "rejected"
		want     string
	}{
		{"approved", []string{"yes"}, []string{"ok:yes"}, "mocked world; yes"},
		{"empty note rejected, then approved", []string{"", "later"},
			[]string{"rejected", "ok:later"}, "mocked world; later"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s testsuite.WorkflowTestSuite
			env := s.NewTestWorkflowEnvironment()
			env.RegisterActivity(Greet)
			env.OnActivity(Greet, mock.Anything, "world").Return("mocked world", nil).Once()

			var acks []string
			for i, note := range tt.notes {
				env.RegisterDelayedCallback(func() {
					env.UpdateWorkflow(approveUpdate, "u"+strconv.Itoa(i), &testsuite.TestUpdateCallback{
						OnAccept: func() {},
						OnReject: func(error) { acks = append(acks, "rejected") },
						OnComplete: func(r any, err error) {
							if err != nil {
								acks = append(acks, "error: "+err.Error())
								return
							}
							acks = append(acks, r.(string))
						},
					}, note)
				}, 0)
			}
			env.ExecuteWorkflow(SmokeWorkflow, "world")

			if !env.IsWorkflowCompleted() {
				t.Fatal("workflow did not complete")
			}
			if err := env.GetWorkflowError(); err != nil {
				t.Fatalf("workflow error: %v", err)
			}
			var got string
			if err := env.GetWorkflowResult(&got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantAcks, acks); diff != "" {
				t.Errorf("update acks (-want +got):\n%s", diff)
			}
			if got != tt.want {
				t.Errorf("result = %q, want %q", got, tt.want)
			}
			env.AssertExpectations(t)
		})
	}
}
