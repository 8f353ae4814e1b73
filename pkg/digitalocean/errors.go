package digitalocean

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/digitalocean/godo"
)

// Failure is how a handler should react to a DigitalOcean error.
type Failure struct {
	// Reason is a condition reason: Unauthorized, Rejected, NotFound, RateLimited, Unavailable.
	Reason string
	// Message is DigitalOcean's own message, never the request URL or token.
	Message string
	// RetryAfter is when trying again makes sense.
	RetryAfter time.Duration
	// Permanent failures wait for a change of input rather than retrying soon.
	Permanent bool
}

// Classify turns an error from godo into a Failure.
func Classify(err error) Failure {
	var held *HeldBackError
	if errors.As(err, &held) {
		return Failure{Reason: "RateLimited", Message: held.Error(), RetryAfter: held.Wait}
	}
	var resp *godo.ErrorResponse
	if !errors.As(err, &resp) || resp.Response == nil {
		// Transport errors carry the URL, which holds no secret; keep it short anyway.
		return Failure{Reason: "Unavailable", Message: "DigitalOcean API unreachable: " + transportMessage(err), RetryAfter: 10 * time.Second}
	}
	switch code := resp.Response.StatusCode; {
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		return Failure{Reason: "Unauthorized", Message: tokenRejected + ": " + resp.Message, RetryAfter: 5 * time.Minute, Permanent: true}
	case code == http.StatusNotFound:
		return Failure{Reason: "NotFound", Message: resp.Message, RetryAfter: 10 * time.Second}
	case code == http.StatusTooManyRequests:
		return Failure{Reason: "RateLimited", Message: resp.Message, RetryAfter: retryAfter(resp.Response)}
	case code == http.StatusUnprocessableEntity || (code >= 400 && code < 500):
		return Failure{Reason: "Rejected", Message: resp.Message, RetryAfter: 5 * time.Minute, Permanent: true}
	default:
		return Failure{Reason: "Unavailable", Message: resp.Message, RetryAfter: 10 * time.Second}
	}
}

// tokenRejected starts the message of an Unauthorized failure.
const tokenRejected = "DigitalOcean rejected the API token"

// IsNotFound reports a 404 from DigitalOcean.
func IsNotFound(err error) bool {
	var resp *godo.ErrorResponse
	return errors.As(err, &resp) && resp.Response != nil && resp.Response.StatusCode == http.StatusNotFound
}

// IsKeyInUse reports DigitalOcean's answer to creating a key it already has.
func IsKeyInUse(err error) bool {
	var resp *godo.ErrorResponse
	return errors.As(err, &resp) && resp.Response != nil &&
		resp.Response.StatusCode == http.StatusUnprocessableEntity && resp.Message == "SSH Key is already in use on your account"
}

func retryAfter(resp *http.Response) time.Duration {
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
		return time.Duration(s) * time.Second
	}
	if reset, err := strconv.ParseInt(resp.Header.Get("ratelimit-reset"), 10, 64); err == nil {
		if d := time.Until(time.Unix(reset, 0)); d > 0 {
			return d
		}
	}
	return 30 * time.Second
}

func transportMessage(err error) string {
	var urlErr interface{ Unwrap() error }
	if errors.As(err, &urlErr) && urlErr.Unwrap() != nil {
		return urlErr.Unwrap().Error()
	}
	return err.Error()
}

// IsHeldBack reports whether err is the client-side limiter's refusal.
func IsHeldBack(err error) bool {
	var held *HeldBackError
	return errors.As(err, &held)
}

// IsRefusal reports an answer by which DigitalOcean applied nothing: 401
// or 403 (the token) or 422 (the request). It checks a request in full
// before acting on it, so after such an answer nothing exists that the
// request would have made. A lost answer, a timeout or a 5xx says nothing
// of the kind.
func IsRefusal(err error) bool {
	var resp *godo.ErrorResponse
	if !errors.As(err, &resp) || resp.Response == nil {
		return false
	}
	switch resp.Response.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusUnprocessableEntity:
		return true
	}
	return false
}

// IsDropletLimit reports a create DigitalOcean refused because the
// account holds as many droplets as its droplet limit allows (422
// "creating this/these droplet(s) will exceed your droplet limit").
func IsDropletLimit(err error) bool {
	var resp *godo.ErrorResponse
	return errors.As(err, &resp) && resp.Response != nil && resp.Response.StatusCode == http.StatusUnprocessableEntity &&
		strings.Contains(strings.ToLower(resp.Message), "droplet limit")
}

// IsSoldOut reports a create DigitalOcean refused because the region it
// went to cannot take the size now (422 "Size is not available in this
// region.", or "Region is not available"): the same create may go to
// another region. An image missing from the region ("The image you
// specified is not available in the selected region.") is no such refusal.
func IsSoldOut(err error) bool {
	var resp *godo.ErrorResponse
	if !errors.As(err, &resp) || resp.Response == nil || resp.Response.StatusCode != http.StatusUnprocessableEntity {
		return false
	}
	m := strings.ToLower(resp.Message)
	return strings.HasPrefix(m, "size is not available") || strings.HasPrefix(m, "region is not available")
}
