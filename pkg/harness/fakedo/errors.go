package fakedo

import (
	"net/http"
	"strings"
)

// apiError is DigitalOcean's error body.
type apiError struct {
	ID        string `json:"id"`
	Message   string `json:"message"`
	RequestID string `json:"request_id,omitempty"`
}

const (
	msgNotFound     = "The resource you were accessing could not be found."
	msgUnauthorized = "Unable to authenticate you"
	msgRateLimited  = "API rate limit exceeded."
)

func errReply(status int, id, msg string) reply {
	return reply{status: status, body: apiError{ID: id, Message: msg}}
}

func notFound() reply { return errReply(http.StatusNotFound, "not_found", msgNotFound) }

func unauthorized() reply {
	return errReply(http.StatusUnauthorized, "unauthorized", msgUnauthorized)
}

func tooManyRequests() reply {
	return errReply(http.StatusTooManyRequests, "too_many_requests", msgRateLimited)
}

func unprocessable(msg string) reply {
	return errReply(http.StatusUnprocessableEntity, "unprocessable_entity", msg)
}

func badRequest(msg string) reply { return errReply(http.StatusBadRequest, "bad_request", msg) }

// injectedError is the body of a fault-injected failure with the given status.
func injectedError(status int) reply {
	switch status {
	case http.StatusInternalServerError:
		return errReply(status, "server_error", "Server was unable to give you a response.")
	case http.StatusServiceUnavailable:
		return errReply(status, "service_unavailable", "The service is temporarily unavailable. Please try again later.")
	case http.StatusTooManyRequests:
		return tooManyRequests()
	}
	id := strings.ReplaceAll(strings.ToLower(http.StatusText(status)), " ", "_")
	if id == "" {
		id = "error"
	}
	return errReply(status, id, http.StatusText(status))
}
