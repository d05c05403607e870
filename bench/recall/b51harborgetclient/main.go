// Project: Harbor (goharbor/harbor), jobservice, v1.7/v1.8 development (April 2019).
// Files/functions: src/jobservice/job/impl/utils/utils.go (GetClient, the
// package-level coreClient and mutex), src/common/http/modifier/auth
// (NewSecretAuthorizer), src/common/utils/registry (NewTransport).
// PR: goharbor/harbor#7384 "fix deadlock when client not exist." (first sent as
// #7383 "Fix deadlock": "When client not exist, will deadlock.").
//
// GetClient lazily builds the HTTP client that job handlers use to call back
// into Harbor core with the jobservice secret. It takes the package mutex, and
// when the client does not exist yet it reads JOBSERVICE_SECRET; if the
// secret is not set it returns an error without unlocking the mutex. The job
// that hit the error fails normally, but the mutex stays locked: the next job
// that needs the core client, even after the secret has been provided, blocks
// in GetClient forever, and with it the worker that runs it. The fix releases
// the mutex with defer. The job type and worker loop below only drive
// GetClient the way jobservice workers do; they are not Harbor's own jobs.
package main

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"sync"
)

// ---- src/common/http/modifier/auth ----

type Modifier interface {
	Modify(*http.Request) error
}

type SecretAuthorizer struct{ secret string }

func NewSecretAuthorizer(secret string) *SecretAuthorizer { return &SecretAuthorizer{secret: secret} }

func (s *SecretAuthorizer) Modify(req *http.Request) error {
	req.Header.Set("Authorization", "Harbor-Secret "+s.secret)
	return nil
}

// ---- src/common/utils/registry ----

type Transport struct {
	transport http.RoundTripper
	modifiers []Modifier
}

func NewTransport(transport http.RoundTripper, modifiers ...Modifier) *Transport {
	return &Transport{transport: transport, modifiers: modifiers}
}

func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	for _, modifier := range t.modifiers {
		if err := modifier.Modify(req); err != nil {
			return nil, err
		}
	}
	return t.transport.RoundTrip(req)
}

// ---- src/jobservice/job/impl/utils ----

var coreClient *http.Client
var mutex = &sync.Mutex{}

// GetClient returns the HTTP client that will attach jobservice secret to the
// request, which can be used for accessing Harbor's Core Service.
// This function returns error if the secret of Job service is not set.
func GetClient() (*http.Client, error) {
	mutex.Lock()
	if coreClient == nil {
		secret := os.Getenv("JOBSERVICE_SECRET")
		if len(secret) == 0 {
			return nil, fmt.Errorf("unable to load secret for job service")
		}
		modifier := NewSecretAuthorizer(secret)
		coreClient = &http.Client{Transport: NewTransport(&http.Transport{}, modifier)}
	}
	mutex.Unlock()
	return coreClient, nil
}

// ---- job runner ----

type Parameters map[string]interface{}

type Interface interface {
	Validate(params Parameters) error
	Run(params Parameters) error
}

// coreCallbackJob reports its progress to core through the shared client.
type coreCallbackJob struct{ name string }

func (j *coreCallbackJob) Validate(params Parameters) error {
	if _, ok := params["core_url"]; !ok {
		return errors.New("missing core_url")
	}
	return nil
}

func (j *coreCallbackJob) Run(params Parameters) error {
	client, err := GetClient()
	if err != nil {
		return fmt.Errorf("%s: %w", j.name, err)
	}
	_ = client // the status hook would be POSTed to params["core_url"] here
	return nil
}

func runJob(j Interface, params Parameters) error {
	if err := j.Validate(params); err != nil {
		return err
	}
	return j.Run(params)
}

func main() {
	os.Unsetenv("JOBSERVICE_SECRET")
	params := Parameters{"core_url": "http://core:8080"}

	results := make(chan error)
	jobs := make(chan Interface)
	go func() {
		for j := range jobs {
			results <- runJob(j, params)
		}
	}()

	jobs <- &coreCallbackJob{name: "first job"}
	fmt.Println("first job:", <-results)

	// The operator fixes the configuration; later jobs should work.
	os.Setenv("JOBSERVICE_SECRET", "5ecr3t")
	jobs <- &coreCallbackJob{name: "second job"}
	fmt.Println("second job:", <-results)
}
