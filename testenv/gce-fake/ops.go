package main

// Global operations: every write answers one, which goes PENDING → RUNNING
// (opPolls steps) → DONE, with an error when a fault asked for one; get moves
// it one step per call and wait until DONE or waitSteps steps.

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	computega "google.golang.org/api/compute/v1"
)

// opError is how an operation that fails reports it (Operation.error plus the
// HTTP status the API would have answered).
type opError struct {
	Code       string `json:"code"`
	Message    string `json:"message"`
	HTTPStatus int    `json:"httpStatus,omitempty"`
}

type opEntry struct {
	op        *computega.Operation
	remaining int // polls answered RUNNING before DONE
	fail      *opError
}

func (s *server) newOperation(project, kind, target string, fail *opError) *computega.Operation {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opSeq++
	name := fmt.Sprintf("operation-%d-%06d", time.Now().UnixMilli(), s.opSeq)
	op := &computega.Operation{
		Kind: "compute#operation", Id: uint64(5000000 + s.opSeq), Name: name,
		OperationType: kind, TargetLink: target, Status: "PENDING", Progress: 0,
		InsertTime: time.Now().Format(time.RFC3339),
		SelfLink:   selfBase + "projects/" + project + "/global/operations/" + name,
		User:       "route-controller@fake.iam.gserviceaccount.com",
	}
	e := &opEntry{op: op, remaining: s.opPolls, fail: fail}
	if s.opPolls == 0 {
		s.finish(e)
	}
	s.ops[name] = e
	copy := *op
	return &copy
}

func (s *server) finish(e *opEntry) {
	e.op.Status, e.op.Progress = "DONE", 100
	e.op.EndTime = time.Now().Format(time.RFC3339)
	if e.fail != nil {
		e.op.Error = &computega.OperationError{Errors: []*computega.OperationErrorErrors{{Code: e.fail.Code, Message: e.fail.Message}}}
		status := e.fail.HTTPStatus
		if status == 0 {
			status = 400
		}
		e.op.HttpErrorStatusCode = int64(status)
		e.op.HttpErrorMessage = strings.ReplaceAll(canonicalStatus(status), "PERMISSION_DENIED", "FORBIDDEN")
	}
}

// step moves an operation one poll on: RUNNING while polls remain, then DONE.
func (s *server) step(e *opEntry) {
	if e.op.Status == "DONE" {
		return
	}
	if e.remaining > 0 {
		e.remaining--
		e.op.Status, e.op.Progress = "RUNNING", 50
		if e.op.StartTime == "" {
			e.op.StartTime = time.Now().Format(time.RFC3339)
		}
		return
	}
	s.finish(e)
}

// getOperation is globalOperations.get (one step per call) or, with wait,
// globalOperations.wait: it returns once the operation is DONE, or (like the
// API near its 2-minute deadline) after waitSteps steps while still RUNNING.
func (s *server) getOperation(w http.ResponseWriter, r *http.Request, project, name string, wait bool) *apiError {
	s.mu.Lock()
	e, ok := s.ops[name]
	if !ok {
		s.mu.Unlock()
		return &apiError{code: 404, message: fmt.Sprintf("The resource 'projects/%s/global/operations/%s' was not found", project, name)}
	}
	s.step(e)
	for steps := 1; wait && e.op.Status != "DONE" && (s.waitSteps == 0 || steps < s.waitSteps); steps++ {
		s.mu.Unlock()
		select {
		case <-r.Context().Done():
			return nil
		case <-time.After(5 * time.Millisecond):
		}
		s.mu.Lock()
		s.step(e)
	}
	op := *e.op
	s.mu.Unlock()
	writeJSON(w, 200, &op)
	return nil
}
