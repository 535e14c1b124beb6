from __future__ import annotations

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import authentication, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from leaderboard.accounts.authentication import ApiTokenAuthentication
from leaderboard.accounts.models import ApiToken
from leaderboard.accounts.selectors import api_token_list
from leaderboard.accounts.services import api_token_create, api_token_revoke
from leaderboard.accounts.throttles import ThrottledBeforeAuthentication


class TokenOutput(serializers.ModelSerializer):
    class Meta:
        model = ApiToken
        fields = ["id", "name", "key_hint", "created_at", "last_used_at"]


class TokenListCreateApi(ThrottledBeforeAuthentication, APIView):
    """Your API tokens. POST creates one; its `key` is shown only in that response.
    Basic auth (username + password) is accepted here so that a first token can be made."""

    authentication_classes = [
        ApiTokenAuthentication,
        authentication.SessionAuthentication,
        authentication.BasicAuthentication,
    ]

    class TokenCreateInput(serializers.Serializer):
        name = serializers.CharField(max_length=100, required=False, default="default")

    @extend_schema(responses=TokenOutput(many=True))
    def get(self, request):
        return Response(TokenOutput(api_token_list(user=request.user), many=True).data)

    @extend_schema(
        request=TokenCreateInput,
        responses={
            201: inline_serializer(
                "TokenCreated",
                {
                    "id": serializers.IntegerField(),
                    "name": serializers.CharField(),
                    "key": serializers.CharField(),
                },
            )
        },
    )
    def post(self, request):
        data = self.TokenCreateInput(data=request.data)
        data.is_valid(raise_exception=True)
        token, key = api_token_create(user=request.user, name=data.validated_data["name"])
        return Response(
            {"id": token.pk, "name": token.name, "key": key}, status=status.HTTP_201_CREATED
        )


class TokenDeleteApi(ThrottledBeforeAuthentication, APIView):
    authentication_classes = TokenListCreateApi.authentication_classes

    @extend_schema(responses={204: None})
    def delete(self, request, token_id: int):
        token = api_token_list(user=request.user).filter(pk=token_id).first()
        if token is None:
            return Response(
                {"detail": f"you have no token {token_id}"}, status=status.HTTP_404_NOT_FOUND
            )
        api_token_revoke(token=token)
        return Response(status=status.HTTP_204_NO_CONTENT)
